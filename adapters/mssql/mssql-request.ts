import type { Knex } from 'knex';
import type { TediousColumn } from './mssql-types.js';

/** A tedious Request, as far as it is used here. */
interface TediousRequest {
  on(event: 'columnMetadata', listener: (columns: TediousColumn[]) => void): void;
  on(event: 'row', listener: (row: { value: unknown; metadata: TediousColumn }[]) => void): void;
}

/**
 * The internals of knex's mssql client (knex 3, lib/dialects/mssql) used to run one request and see its
 * column metadata, which knex.raw drops (an empty result would have no columns). Its request queue is
 * reused so that requests on one connection still run one after another.
 */
interface KnexMssqlClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  _makeRequest(query: { sql: string }, callback: (error: Error | null | undefined, rowCount?: number) => void): TediousRequest;
  _assignBindings(request: TediousRequest, bindings: readonly unknown[]): void;
  _enqueueRequest(request: TediousRequest, connection: unknown): void;
  _chomp(connection: unknown): void;
}

export interface TediousResult {
  columns: TediousColumn[];
  rows: Record<string, unknown>[];
  rowCount: number;
}

/**
 * Runs one statement with `?` bindings (read by knex.raw as on every dialect, then numbered `@p0`...).
 * Keeps at most `keepRows` rows: the rest are read from the wire but not held.
 */
export async function runTediousRequest(
  knex: Knex,
  sql: string,
  bindings: readonly unknown[],
  keepRows = Number.POSITIVE_INFINITY,
): Promise<TediousResult> {
  const native = knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
  const client = knex.client as unknown as KnexMssqlClient;
  const connection = await client.acquireConnection();
  try {
    return await new Promise<TediousResult>((resolve, reject) => {
      let columns: TediousColumn[] = [];
      let rows: Record<string, unknown>[] = [];
      let settled = false;
      const request = client._makeRequest({ sql: native.sql }, (error, rowCount) => {
        if (settled) return;
        settled = true;
        process.nextTick(() => client._chomp(connection));
        if (error) reject(error);
        else resolve({ columns, rows, rowCount: rowCount ?? 0 });
      });
      // A batch may return several result sets: the last one is the result.
      request.on('columnMetadata', (described) => {
        columns = Array.isArray(described) ? described : Object.values(described);
        rows = [];
      });
      request.on('row', (cells) => {
        if (rows.length >= keepRows) return;
        const row: Record<string, unknown> = {};
        for (const cell of cells) row[cell.metadata.colName] = cell.value;
        rows.push(row);
      });
      client._assignBindings(request, native.bindings);
      client._enqueueRequest(request, connection);
    });
  } finally {
    await client.releaseConnection(connection);
  }
}
