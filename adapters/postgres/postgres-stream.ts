import pg from 'pg';
import { offAbort, onAbort, ResultBuilder, type QueryOptions, type QueryResult } from '../../core/plugin-api/index.js';
import { pgQuery, type NativeStatement } from './pg-statement.js';
import { StatementCanceller, type CancellableClient } from './postgres-cancel.js';
import { postgresCodec } from './postgres-types.js';

/** A pooled pg client: it runs a Submittable (pg.Query), and can be cancelled (postgres-cancel.ts). */
export interface StreamingClient extends CancellableClient {
  query(query: pg.Query): unknown;
}

/** The part of one pg result the rows are read with. */
interface PgResultShape {
  fields: { name: string; dataTypeID: number }[];
  rowCount?: number | null;
}

const EMPTY: QueryResult = { columns: [], rows: [], rowCount: 0, truncated: false };

/**
 * Runs one statement and reads its rows one by one as pg parses them (a pg.Query without a callback keeps
 * none itself), each kept within `options.maxRows` and `options.maxBytes` (ResultBuilder): the statement
 * still costs one round trip, and no more than the budget is held. Once a limit cut the result, or when
 * `options.signal` aborts, the statement is cancelled on the server (a cancel request, sent again until
 * the statement ends), and the promise settles only after the last request was served, so the client returns to its pool with nothing of this
 * statement left to reach the next one. A cut result resolves even though the cancel made the statement
 * fail; an aborted one rejects with the server's 57014.
 *
 * A text of several statements (no values, simple protocol) answers its last result, as knex.raw does.
 */
export function streamStatement(client: StreamingClient, statement: NativeStatement, options: QueryOptions): Promise<QueryResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(canceledByRequest());
  return new Promise<QueryResult>((resolve, reject) => {
    const query = pgQuery(statement);
    let current: PgResultShape | undefined;
    let builder: ResultBuilder | undefined;
    const canceller = new StatementCanceller(client);
    const { cancel } = canceller;
    let settled = false;
    const builderFor = (result: PgResultShape): ResultBuilder => {
      if (result !== current || builder === undefined) {
        current = result;
        builder = new ResultBuilder(result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) })), options);
      }
      return builder;
    };
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      if (signal) offAbort(signal, cancel);
      canceller.ended(outcome);
    };
    if (signal) onAbort(signal, cancel);
    query.on('row', (row: Record<string, unknown>, result?: PgResultShape) => {
      if (result !== undefined && !builderFor(result).add(row)) cancel();
    });
    // after a cut, the statement's failure (the cancel, or a later row over the bound) ends only what was cut off
    query.on('error', (error: Error) => settle(() => (builder?.done ? resolve(builder.result()) : reject(error))));
    query.on('end', (results: PgResultShape | PgResultShape[]) => {
      const last = Array.isArray(results) ? results.at(-1) : results;
      settle(() => resolve(last === undefined ? EMPTY : builderFor(last).result(last.rowCount ?? 0)));
    });
    client.query(query);
  });
}

/** The error a statement whose request ended before it was sent fails with, as the server's would read. */
function canceledByRequest(): Error {
  return Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
}
