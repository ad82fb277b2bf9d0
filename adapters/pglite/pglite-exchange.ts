/**
 * A caller's statement as ONE extended-protocol exchange with PGlite (worker thread side): the scope
 * statement, then the caller's statement, then one Sync. PostgreSQL skips every message after an error up
 * to the Sync, so the caller's statement never runs when its scope could not be set; and both run in the
 * same implicit transaction, so the scope's `transaction_read_only` holds for the statement.
 *
 * The caller's texts are kept as named prepared statements, per role and text (parse and plan once: the
 * row-size bound around a caller's query doubles its planning time otherwise). The scope statement is
 * never kept: a statement that got past the analyzer could DEALLOCATE and PREPARE under a kept name, and
 * the scope must not be a statement anyone could replace.
 */
import { protocol, types, type PGlite } from '@electric-sql/pglite';
import type { PgliteRows, SessionScope } from './pglite-messages.js';

const { serialize } = protocol;

/** The role for the session, read-only for this transaction only: the next statement's scope is its own. */
const SCOPE_SQL = "select pg_catalog.set_config('role', $1, false), pg_catalog.set_config('transaction_read_only', $2, true)";
const TEXT_OID = 25;
/** Prepared statements kept per worker; the least recently used is closed past it. */
const KEPT_STATEMENTS = 200;
/** A kept name is gone (26000) or taken (42P05): a statement of a caller deallocated or prepared one. */
const LOST_NAME = new Set(['26000', '42P05']);
/** Tags of statements that change the session's prepared statements. */
const TAMPERING = /^(PREPARE|DEALLOCATE|DISCARD)\b/;

/** The rows that may cross: at most `maxRows` + 1, and within `maxBytes` plus the row that overran it. */
export interface CrossingLimits {
  maxRows?: number | undefined;
  maxBytes?: number | undefined;
}

interface Kept {
  name: string;
  paramTypes: number[];
}

interface Field {
  name: string;
  dataTypeID: number;
}

export class CallerStatements {
  /** By role and text, in order of last use. */
  private readonly kept = new Map<string, Kept>();
  private readonly closing: Uint8Array[] = [];
  private named = 0;
  private readonly decoder = new TextDecoder();

  constructor(private readonly db: PGlite) {}

  /**
   * Runs `sql` as `scope`; a kept name lost to a caller's statement is forgotten, and the statement tried once
   * more. `planEachRun`: prepared for this run only (its custom plan), closed with the next exchange.
   */
  async run(scope: SessionScope, sql: string, params: unknown[], limits: CrossingLimits, planEachRun = false): Promise<PgliteRows> {
    try {
      return await this.once(scope, sql, params, limits, planEachRun);
    } catch (error) {
      if (!LOST_NAME.has(String((error as { code?: unknown }).code))) throw error;
      await this.forgetAll();
      return this.once(scope, sql, params, limits, planEachRun);
    }
  }

  private async once(scope: SessionScope, sql: string, params: unknown[], limits: CrossingLimits, planEachRun: boolean): Promise<PgliteRows> {
    const key = `${scope.role}\u0000${sql}`;
    let statement = planEachRun ? await this.prepare(scope, sql) : this.kept.get(key);
    if (statement === undefined) {
      statement = await this.prepare(scope, sql);
      this.keep(key, statement);
    } else if (!planEachRun) {
      // most recent last
      this.kept.delete(key);
      this.kept.set(key, statement);
    }
    const { serializers } = this.db;
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = serializers[statement.paramTypes[index] ?? 0];
      return serializer ? serializer(value) as string : String(value);
    });
    let raw: Uint8Array;
    try {
      raw = await this.exchange(scope, [
        serialize.bind({ statement: statement.name, values }),
        serialize.describe({ type: 'P' }),
        serialize.execute({}),
      ]);
    } finally {
      if (planEachRun) this.closing.push(serialize.close({ type: 'S', name: statement.name }));
    }
    const result = this.read(raw, limits);
    if (TAMPERING.test(result.tag)) await this.forgetAll();
    return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
  }

  /** Parses `sql` under `scope` (names resolve as the role sees them) and learns its parameters' types. */
  private async prepare(scope: SessionScope, sql: string): Promise<Kept> {
    const name = `vdb_caller_${++this.named}`;
    const raw = await this.exchange(scope, [serialize.parse({ name, text: sql }), serialize.describe({ type: 'S', name })]);
    let paramTypes: number[] = [];
    this.walk(raw, (type, start, _end, view) => {
      if (type !== 0x74) return; // 't' ParameterDescription
      paramTypes = Array.from({ length: view.getInt16(start) }, (_, index) => view.getInt32(start + 2 + 4 * index));
    });
    return { name, paramTypes };
  }

  private keep(key: string, statement: Kept): void {
    this.kept.set(key, statement);
    if (this.kept.size <= KEPT_STATEMENTS) return;
    const [oldest, { name }] = this.kept.entries().next().value as [string, Kept];
    this.kept.delete(oldest);
    this.closing.push(serialize.close({ type: 'S', name }));
  }

  /** The scope, `messages` and a Sync in one call; closes of evicted statements go first. Throws the first error. */
  private async exchange(scope: SessionScope, messages: Uint8Array[]): Promise<Uint8Array> {
    const parts = [
      ...this.closing.splice(0),
      serialize.parse({ text: SCOPE_SQL, types: [TEXT_OID, TEXT_OID] }),
      serialize.bind({ values: [scope.role, scope.readOnly ? 'on' : 'off'] }),
      serialize.execute({}),
      ...messages,
      serialize.sync(),
    ];
    const raw = await this.call(concat(parts));
    let failed = false;
    this.walk(raw, (type) => {
      if (type === 0x45) failed = true; // 'E' ErrorResponse
    });
    if (failed) throw databaseError(raw);
    return raw;
  }

  /**
   * The backend's answer to `message`, as bytes. Through `execProtocolRawStream`, never `execProtocolRaw`: in
   * PGlite 0.5 the latter also parses every answer into a list that only `execProtocol` empties, so a worker
   * serving callers would keep every message it ever answered (about 2 KiB per statement). The stream hands
   * each chunk over and keeps nothing; a chunk is a view of PGlite's memory, so it is copied.
   */
  private async call(message: Uint8Array): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    await this.db.execProtocolRawStream(message, { onRawData: (chunk) => chunks.push(chunk.slice()) });
    return chunks.length === 1 ? chunks[0] as Uint8Array : concat(chunks);
  }

  /**
   * The caller's result: the rows after the scope's CommandComplete, decoded with PGlite's parsers only
   * while they may cross.
   */
  private read(raw: Uint8Array, limits: CrossingLimits): { rows: Record<string, unknown>[]; fields: Field[]; affectedRows: number; tag: string } {
    const { parsers } = this.db;
    const rows: Record<string, unknown>[] = [];
    let fields: Field[] = [];
    let completed = 0;
    let full = false;
    let bytes = 2;
    let tag = '';
    this.walk(raw, (type, start, end, view) => {
      switch (type) {
        case 0x54: { // 'T' RowDescription
          fields = [];
          let at = start + 2;
          for (let index = view.getInt16(start); index > 0; index--) {
            const nul = raw.indexOf(0, at);
            const name = this.decoder.decode(raw.subarray(at, nul));
            fields.push({ name, dataTypeID: view.getInt32(nul + 7) });
            at = nul + 19;
          }
          break;
        }
        case 0x44: { // 'D' DataRow (the scope's own row comes before any CommandComplete)
          if (completed === 0 || full) break;
          const row: Record<string, unknown> = {};
          let at = start + 2;
          for (const field of fields) {
            const length = view.getInt32(at);
            at += 4;
            if (length < 0) {
              row[field.name] = null;
              continue;
            }
            row[field.name] = types.parseType(this.decoder.decode(raw.subarray(at, at + length)), field.dataTypeID, parsers);
            at += length;
          }
          rows.push(row);
          if (limits.maxRows !== undefined && rows.length > limits.maxRows) full = true;
          if (limits.maxBytes !== undefined && (bytes += rowSize(row)) > limits.maxBytes) full = true;
          break;
        }
        case 0x43: // 'C' CommandComplete
          if (completed++ > 0) tag = this.decoder.decode(raw.subarray(start, end - 1));
          break;
      }
    });
    const parts = tag.split(' ');
    const counted = ['INSERT', 'UPDATE', 'DELETE', 'COPY', 'MERGE'].includes(parts[0] ?? '');
    return { rows, fields, affectedRows: counted ? Number.parseInt(parts[parts.length - 1] ?? '0', 10) || 0 : 0, tag };
  }

  /** Each backend message: its type byte and where its body starts and ends. */
  private walk(raw: Uint8Array, visit: (type: number, start: number, end: number, view: DataView) => void): void {
    const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    for (let at = 0; at + 5 <= raw.length;) {
      const end = at + 1 + view.getInt32(at + 1);
      visit(raw[at] as number, at + 5, end, view);
      at = end;
    }
  }

  /** Every kept statement closed and forgotten: their names may have been taken. */
  private async forgetAll(): Promise<void> {
    this.kept.clear();
    this.closing.length = 0;
    await this.db.exec('deallocate all');
  }
}

/** A lower bound of the row's JSON: the characters of its text values, the bytes of its binary ones. */
export function rowSize(row: Record<string, unknown>): number {
  let size = 0;
  for (const value of Object.values(row)) {
    if (typeof value === 'string') size += value.length;
    else if (value instanceof Uint8Array) size += value.byteLength;
    else if (value !== null && typeof value === 'object' && !(value instanceof Date)) size += JSON.stringify(value, (_key, inner: unknown) => (typeof inner === 'bigint' ? inner.toString() : inner)).length;
  }
  return size;
}

/** PGlite's own DatabaseError for the first ErrorResponse (code, detail, position...), as its query() throws. */
function databaseError(raw: Uint8Array): Error {
  let found: Error | undefined;
  new protocol.Parser().parse(raw, (message) => {
    if (found === undefined && message instanceof protocol.messages.DatabaseError) found = message;
  });
  return found ?? new Error('the embedded database answered an error it did not describe');
}

function concat(parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
