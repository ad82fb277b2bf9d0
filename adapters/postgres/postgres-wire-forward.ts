/**
 * The SQL front door's statements forwarded to PostgreSQL in its own protocol (`Datasource.forwardWire`):
 * the client's Parse/Bind/Describe/Execute go to a pooled backend as the client sent them (unnamed, values
 * bound), and the backend's answer messages go back whole, so the service neither decodes nor re-encodes
 * a row. For that statement the pg client's socket is read here instead of by pg; pg gets it back at
 * ReadyForQuery, when the backend has nothing more to say.
 */
import type { Socket } from 'node:net';
import { offAbort, onAbort, onDeadline, type WireForwardOptions, type WireForwardOutcome, type WireStatement } from '../../core/plugin-api/adapter-kit.js';
import { StatementCanceller, type CancellableClient } from './postgres-cancel.js';
import type { PreparedStatements } from './prepared-statements.js';

/** A pooled pg client whose connection's socket can be read for one statement. */
export interface ForwardingClient extends CancellableClient {
  readonly connection: { readonly stream: Socket };
}

/** The backend messages passed on to the client: every answer but the ones the door sends itself. */
const PASSED = new Set([...'TtnDCIs'].map((code) => code.charCodeAt(0)));
const DATA_ROW = 0x44;
const ERROR_RESPONSE = 0x45;
const READY_FOR_QUERY = 0x5a;
const PARSE_COMPLETE = 0x31;

/** Marks a forwarded statement's key among the datasource's prepared statements: its text is the client's. */
const FORWARDED = '\u0001forwarded\u0000';
/** The backend refused a prepared statement whose result changed since it was parsed (DDL), before any row. */
const STALE = 'stale';
/** A name this connection had parsed is gone (26000): someone deallocated it; it is parsed again. */
const LOST = 'lost';
type RunOutcome = WireForwardOutcome | typeof STALE | typeof LOST;

/**
 * Runs `statement` on `client` (prepared under its name where it has one) and passes its answer to
 * `options.send`. Resolves at ReadyForQuery, once any cancel request it sent was served, so the client goes
 * back to its pool with nothing of this statement left; rejects with the backend's error (pg's fields), when
 * the connection is lost, or at the statement's client-side deadline (a backend that no longer answers).
 */
export function forwardStatement(client: ForwardingClient, statement: WireStatement, options: WireForwardOptions, prepared: PreparedStatements): Promise<WireForwardOutcome> {
  const key = namingKey(statement);
  const named = key === undefined ? undefined : prepared.of(key, true, () => statement.text);
  const name = named?.name;
  const parsedNames = prepared.parsedOn(client);
  if (key === undefined || named === undefined || name === undefined) return run(client, statement, undefined, parsedNames, options) as Promise<WireForwardOutcome>;
  return run(client, statement, name, parsedNames, options).then((outcome) => {
    if (outcome === LOST) return forwardStatement(client, statement, options, prepared);
    if (outcome !== STALE) return outcome;
    // the text's result changed on the database: it runs unnamed from now on, on every connection
    prepared.unname(key, named);
    return run(client, statement, undefined, parsedNames, options) as Promise<WireForwardOutcome>;
  });
}

/**
 * The key of a statement that may be prepared (its declared types and text): a statement with values is
 * prepared on each connection, as the datasource's own statements are, so its later runs there send Bind,
 * Describe, Execute and Sync, and PostgreSQL skips parsing and planning (about half of its work on a
 * one-row lookup). Texts without values (ad-hoc statements, which rarely repeat) run unnamed.
 */
function namingKey(statement: WireStatement): string | undefined {
  const { text, parameterTypes, describe, parameters } = statement;
  if (describe === 'statement' || parameters === undefined || parameters.length === 0) return undefined;
  return `${FORWARDED}${parameterTypes.join(',')}\u0000${text}`;
}

/** One forwarded run, under `name` (parsed first where this connection has not) or unnamed. */
function run(client: ForwardingClient, statement: WireStatement, name: string | undefined, parsedNames: Set<string>, options: WireForwardOptions): Promise<RunOutcome> {
  const { signal, maxBytes, send } = options;
  if (signal?.aborted) return Promise.reject(Object.assign(new Error('canceling statement due to user request'), { code: '57014' }));
  const socket = client.connection.stream;
  // a connection lost while idle in the pool would never report its close again
  if (socket.destroyed) return Promise.reject(connectionLost());
  const pgListeners = socket.listeners('data') as ((chunk: Buffer) => void)[];
  const parses = name === undefined || !parsedNames.has(name);
  return new Promise<RunOutcome>((resolve, reject) => {
    /** The start of a message not yet whole, and how many bytes it needs (5 until its length is read). */
    let parts: Buffer[] = [];
    let partsLength = 0;
    let needed = 0;
    /** Bytes of a message still to drop (a row past the budget is never held). */
    let skipping = 0;
    /** DataRow bytes passed on. */
    let rowBytes = 0;
    let cut = false;
    let passed = false;
    let failure: (Error & { code?: string; routine?: string }) | undefined;
    const canceller = new StatementCanceller(client);
    const { cancel } = canceller;
    let settled = false;
    /** The socket goes back to pg, the statement's watches end. */
    const detach = () => {
      settled = true;
      disarm();
      if (signal) offAbort(signal, cancel);
      socket.removeListener('data', onData);
      socket.removeListener('close', onClose);
      for (const listener of pgListeners) socket.on('data', listener);
    };
    const settle = (outcome: () => void) => {
      if (settled) return;
      detach();
      canceller.ended(outcome);
    };
    // a backend that stopped answering enforces no time limit: the statement is given up without waiting for
    // a cancel, and its connection (released as broken) is destroyed
    const disarm = onDeadline(options.deadline, (error) => {
      if (settled) return;
      detach();
      canceller.abandon();
      reject(error);
    });
    const onClose = () => settle(() => reject(connectionLost()));
    const onMessage = (message: Buffer) => {
      const type = message[0] as number;
      if (type === READY_FOR_QUERY) {
        return settle(() => {
          if (failure !== undefined && !cut) {
            if (name !== undefined && !passed && isStalePlan(failure)) resolve(STALE);
            else if (name !== undefined && !passed && !parses && failure.code === '26000') {
              parsedNames.delete(name);
              resolve(LOST);
            } else reject(failure);
          } else resolve(cut ? 'cut' : 'done');
        });
      }
      if (type === ERROR_RESPONSE) failure ??= backendError(message);
      else if (type === PARSE_COMPLETE && name !== undefined) parsedNames.add(name);
      else if (!cut && failure === undefined && PASSED.has(type)) {
        passed = true;
        send(message);
      }
    };
    const onData = (chunk: Buffer) => {
      let data = chunk;
      if (skipping > 0) {
        const dropped = Math.min(skipping, data.length);
        skipping -= dropped;
        data = data.subarray(dropped);
      }
      if (partsLength > 0) {
        // a message that spans reads is joined once, when it is whole, not at every read
        parts.push(data);
        partsLength += data.length;
        if (partsLength < needed) return;
        data = Buffer.concat(parts, partsLength);
        parts = [];
        partsLength = 0;
      }
      let offset = 0;
      while (data.length - offset >= 5) {
        const type = data[offset] as number;
        const size = 1 + data.readUInt32BE(offset + 1);
        if (type === DATA_ROW && (cut || rowBytes + size > maxBytes)) {
          if (!cut) {
            cut = true;
            cancel();
          }
          const available = Math.min(size, data.length - offset);
          skipping = size - available;
          offset += available;
          continue;
        }
        if (data.length - offset < size) {
          needed = size;
          break;
        }
        if (type === DATA_ROW) rowBytes += size;
        onMessage(data.subarray(offset, offset + size));
        if (settled) return;
        offset += size;
      }
      if (offset < data.length) {
        if (data.length - offset < 5) needed = 5;
        parts = [data.subarray(offset)];
        partsLength = data.length - offset;
      }
    };
    for (const listener of pgListeners) socket.removeListener('data', listener);
    socket.on('data', onData);
    socket.once('close', onClose);
    if (signal) onAbort(signal, cancel);
    socket.write(frontendMessages(statement, name, !parses));
  });
}


/** PostgreSQL's answer to a prepared statement whose result type changed since it was parsed (plancache.c). */
function isStalePlan(error: { code?: string; routine?: string }): boolean {
  return error.code === '0A000' && (error.routine === undefined || error.routine === 'RevalidateCachedQuery');
}

/**
 * Parse (unless `name` is already parsed on the connection), then Describe of the statement or Bind,
 * Describe of the portal and Execute, then Sync: written into one buffer, sized first (a buffer per field
 * cost more than the rest of the forwarding). The portal is always the unnamed one.
 */
function frontendMessages(statement: WireStatement, name: string | undefined, parsed: boolean): Buffer {
  const { text, parameterTypes, describe, parameters = [], resultFormats = [] } = statement;
  const nameBytes = name === undefined ? 0 : name.length;
  const textBytes = parsed ? 0 : Buffer.byteLength(text);
  const executes = describe === 'rows' || (describe === 'portal' && statement.execute === true);
  let size = SYNC.length;
  if (!parsed) size += 1 + 4 + nameBytes + 1 + textBytes + 1 + 2 + 4 * parameterTypes.length;
  if (describe === 'statement') size += DESCRIBE_STATEMENT.length;
  else {
    size += 1 + 4 + 1 + nameBytes + 1 + 2 + 2 * parameters.length + 2 + 2 + 2 * resultFormats.length;
    for (const { value } of parameters) size += 4 + (value === null ? 0 : value.length);
    if (describe === 'portal') size += DESCRIBE_PORTAL.length;
    if (executes) size += EXECUTE.length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  if (!parsed) {
    out[at] = 0x50;
    at = out.writeUInt32BE(4 + nameBytes + 1 + textBytes + 1 + 2 + 4 * parameterTypes.length, at + 1);
    if (name !== undefined) at += out.write(name, at, 'latin1');
    out[at++] = 0;
    at += out.write(text, at);
    out[at++] = 0;
    at = out.writeInt16BE(parameterTypes.length, at);
    for (const type of parameterTypes) at = out.writeUInt32BE(type, at);
  }
  if (describe === 'statement') {
    at += DESCRIBE_STATEMENT.copy(out, at);
  } else {
    const start = at;
    out[at] = 0x42;
    at += 5;
    out[at++] = 0;
    if (name !== undefined) at += out.write(name, at, 'latin1');
    out[at++] = 0;
    at = out.writeInt16BE(parameters.length, at);
    for (const { format } of parameters) at = out.writeInt16BE(format, at);
    at = out.writeInt16BE(parameters.length, at);
    for (const { value } of parameters) {
      at = out.writeInt32BE(value === null ? -1 : value.length, at);
      if (value !== null) at += value.copy(out, at);
    }
    at = out.writeInt16BE(resultFormats.length, at);
    for (const format of resultFormats) at = out.writeInt16BE(format, at);
    out.writeUInt32BE(at - start - 1, start + 1);
    if (describe === 'portal') at += DESCRIBE_PORTAL.copy(out, at);
    if (executes) at += EXECUTE.copy(out, at);
  }
  SYNC.copy(out, at);
  return out;
}

/** Describe and Execute of the unnamed statement or portal, and Sync, are always the same bytes. */
const DESCRIBE_STATEMENT = Buffer.from([0x44, 0, 0, 0, 6, 0x53, 0]);
const DESCRIBE_PORTAL = Buffer.from([0x44, 0, 0, 0, 6, 0x50, 0]);
const EXECUTE = Buffer.from([0x45, 0, 0, 0, 9, 0, 0, 0, 0, 0]);
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);

function connectionLost(): Error {
  return Object.assign(new Error('the connection to the datasource was lost'), { code: '08006' });
}

/** ErrorResponse fields by their code, as pg names them on its DatabaseError. */
const ERROR_FIELDS: Readonly<Record<string, string>> = {
  S: 'severity', C: 'code', D: 'detail', H: 'hint', P: 'position', W: 'where',
  s: 'schema', t: 'table', c: 'column', d: 'dataType', n: 'constraint', R: 'routine',
};

function backendError(message: Buffer): Error {
  const fields: Record<string, string> = {};
  let text = 'the database refused the statement';
  let offset = 5;
  while (offset < message.length && message[offset] !== 0) {
    const code = String.fromCharCode(message[offset] as number);
    const end = message.indexOf(0, offset + 1);
    if (end < 0) break;
    const value = message.toString('utf8', offset + 1, end);
    if (code === 'M') text = value;
    else if (ERROR_FIELDS[code] !== undefined) fields[ERROR_FIELDS[code] as string] = value;
    offset = end + 1;
  }
  return Object.assign(new Error(text), fields);
}
