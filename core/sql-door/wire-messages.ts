/**
 * The messages of the PostgreSQL wire protocol after the startup message, read and written with the buffer
 * reader and writer pg-gateway itself uses (pg-protocol's). Layouts:
 * https://www.postgresql.org/docs/current/protocol-message-formats.html
 */
import type { PostgresConnection } from 'pg-gateway';
import { typeSize } from './pg-types.js';
import { WireError } from './wire-errors.js';

type Reader = PostgresConnection['reader'];
type Writer = PostgresConnection['writer'];

/** Frontend message types (the first byte). */
export const FRONTEND = {
  query: 0x51, parse: 0x50, bind: 0x42, describe: 0x44, execute: 0x45, close: 0x43, sync: 0x53, flush: 0x48,
  terminate: 0x58, password: 0x70,
} as const;

export interface ParseMessage { statement: string; text: string; parameterTypes: number[] }
export interface BindMessage {
  portal: string;
  statement: string;
  /** One entry per parameter (null for SQL NULL), with the format it came in: 0 text, 1 binary. */
  parameters: { value: Buffer | null; format: number }[];
  /** The result formats asked for: none (all text), one (for every column) or one per column. */
  resultFormats: number[];
}
export interface TargetMessage { target: 'S' | 'P'; name: string }
export interface ExecuteMessage { portal: string; maxRows: number }

/** A message read whole, or the protocol violation (08P01) a malformed one is. */
export function decoded<T>(read: () => T): T {
  try {
    return read();
  } catch {
    throw new WireError('08P01', 'invalid message format');
  }
}

/** The type of the message set on the reader, its type byte and length read. */
export function messageType(reader: Reader): number {
  const type = reader.byte();
  reader.int32();
  return type;
}

export function readQuery(reader: Reader): string {
  return reader.cstring();
}

export function readParse(reader: Reader): ParseMessage {
  const statement = reader.cstring();
  const text = reader.cstring();
  const parameterTypes: number[] = [];
  for (let count = reader.int16(); count > 0; count--) parameterTypes.push(reader.uint32());
  return { statement, text, parameterTypes };
}

/** Plain loops: `Array.from` with a length object cost a measurable share of the door's time per Bind. */
function int16s(reader: Reader): number[] {
  const values: number[] = [];
  for (let count = reader.int16(); count > 0; count--) values.push(reader.int16());
  return values;
}

export function readBind(reader: Reader): BindMessage {
  const portal = reader.cstring();
  const statement = reader.cstring();
  const formats = int16s(reader);
  const parameters: BindMessage['parameters'] = [];
  for (let index = 0, count = reader.int16(); index < count; index++) {
    const length = reader.int32();
    // no format codes: all text; one: it applies to every parameter
    const format = formats.length === 0 ? 0 : (formats.length === 1 ? formats[0] : formats[index]) ?? 0;
    parameters.push({ value: length < 0 ? null : reader.bytes(length), format });
  }
  const resultFormats = int16s(reader);
  return { portal, statement, parameters, resultFormats };
}

export function readTarget(reader: Reader): TargetMessage {
  const target = reader.byte() === 0x53 ? 'S' : 'P';
  return { target, name: reader.cstring() };
}

export function readExecute(reader: Reader): ExecuteMessage {
  return { portal: reader.cstring(), maxRows: reader.int32() };
}

/** A CancelRequest (sent on a connection of its own, instead of a startup message), or undefined. */
export function readCancelRequest(data: Uint8Array): { processId: number; secret: number } | undefined {
  if (data.byteLength !== 16) return undefined;
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (view.readInt32BE(4) !== 80877102) return undefined;
  return { processId: view.readInt32BE(8), secret: view.readInt32BE(12) };
}

/** One column of a RowDescription. */
export interface FieldDescription {
  name: string;
  typeOid: number;
}

/**
 * The messages that never change (a body-less one, ReadyForQuery per status), made once: a lookup sends
 * three of them, and each was a buffer of its own. They are only ever written, never changed.
 */
const BARE = new Map<number, Buffer>();
const READY = { I: framed(0x5a, 'I'), T: framed(0x5a, 'T'), E: framed(0x5a, 'E') } as const;

function framed(code: number, body = ''): Buffer {
  const message = Buffer.alloc(5 + body.length);
  message[0] = code;
  message.writeInt32BE(4 + body.length, 1);
  message.write(body, 5, 'latin1');
  return message;
}

/** Backend messages, each as a framed buffer ready to send. */
export class BackendMessages {
  constructor(private readonly writer: Writer) {}

  /** Codes of the messages without a body: ParseComplete, BindComplete, CloseComplete, NoData, EmptyQueryResponse, PortalSuspended. */
  static readonly CODE = { parseComplete: 0x31, bindComplete: 0x32, closeComplete: 0x33, noData: 0x6e, emptyQuery: 0x49, portalSuspended: 0x73 } as const;

  bare(code: number): Buffer {
    let message = BARE.get(code);
    if (message === undefined) BARE.set(code, (message = framed(code)));
    return message;
  }

  rowDescription(fields: readonly FieldDescription[], formats: readonly number[]): Buffer {
    this.writer.addInt16(fields.length);
    fields.forEach((field, index) => {
      this.writer.addCString(field.name).addInt32(0).addInt16(0).addInt32(field.typeOid).addInt16(typeSize(field.typeOid)).addInt32(-1)
        .addInt16(formats[index] ?? 0);
    });
    return this.writer.flush(0x54);
  }

  parameterDescription(types: readonly number[]): Buffer {
    this.writer.addInt16(types.length);
    for (const type of types) this.writer.addInt32(type);
    return this.writer.flush(0x74);
  }

  dataRow(cells: readonly (Buffer | null)[]): Buffer {
    this.writer.addInt16(cells.length);
    for (const cell of cells) {
      if (cell === null) this.writer.addInt32(-1);
      else this.writer.addInt32(cell.length).add(cell);
    }
    return this.writer.flush(0x44);
  }

  /** CopyOutResponse: `columns` columns in the text format. */
  copyOutResponse(columns: number): Buffer {
    this.writer.addString('\u0000').addInt16(columns);
    for (let column = 0; column < columns; column++) this.writer.addInt16(0);
    return this.writer.flush(0x48);
  }

  copyData(data: Buffer): Buffer {
    return this.writer.add(data).flush(0x64);
  }

  copyDone(): Buffer {
    return this.bare(0x63);
  }

  commandComplete(tag: string): Buffer {
    return this.writer.addCString(tag).flush(0x43);
  }

  parameterStatus(name: string, value: string): Buffer {
    return this.writer.addCString(name).addCString(value).flush(0x53);
  }

  backendKeyData(processId: number, secret: number): Buffer {
    return this.writer.addInt32(processId).addInt32(secret).flush(0x4b);
  }

  authenticationOk(): Buffer {
    return this.writer.addInt32(0).flush(0x52);
  }

  authenticationCleartextPassword(): Buffer {
    return this.writer.addInt32(3).flush(0x52);
  }

  readyForQuery(status: 'I' | 'T' | 'E'): Buffer {
    return READY[status];
  }

  error(severity: 'ERROR' | 'FATAL', code: string, message: string, detail?: string): Buffer {
    this.writer.addString('S').addCString(severity).addString('V').addCString(severity).addString('C').addCString(code)
      .addString('M').addCString(message);
    if (detail !== undefined) this.writer.addString('D').addCString(detail);
    return this.writer.addCString('').flush(0x45);
  }
}

