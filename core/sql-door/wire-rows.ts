/**
 * A result the door answers itself, as the messages that carry it: its RowDescription (or NoData) and its
 * DataRows, each column in the format the client asked for (text, or binary as pg-types.ts encodes it).
 */
import { binaryForm } from './pg-types.js';
import type { ResultSet } from './statement-runner.js';
import { BackendMessages, type FieldDescription } from './wire-messages.js';

/** The format of column `index`: none given is text, one applies to all. */
export function formatOf(formats: readonly number[], index: number): number {
  if (formats.length === 0) return 0;
  return (formats.length === 1 ? formats[0] : formats[index]) ?? 0;
}

/** RowDescription of `fields` in `formats`, or NoData when there are none (Describe). */
export function rowDescription(messages: BackendMessages, fields: readonly FieldDescription[], formats: readonly number[]): Buffer {
  if (fields.length === 0) return messages.bare(BackendMessages.CODE.noData);
  return messages.rowDescription(fields, fields.map((_, index) => formatOf(formats, index)));
}

/** Sends rows `from` up to `to` of `result` in `formats`. */
export function sendRows(messages: BackendMessages, send: (message: Buffer) => void, result: ResultSet, formats: readonly number[], from: number, to: number): void {
  const binary = result.fields.map((_, index) => formatOf(formats, index) === 1);
  for (let index = from; index < to; index++) {
    const row = result.rows[index] as (string | null)[];
    send(messages.dataRow(row.map((cell, column) => {
      if (cell === null) return null;
      return binary[column] ? binaryForm(cell, (result.fields[column] as FieldDescription).typeOid) : Buffer.from(cell);
    })));
  }
}
