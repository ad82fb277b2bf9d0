import pg from 'pg';
import { offAbort, onAbort, onDeadline, type QueryOptions, type QueryResult, ResultBuilder, type ValueCodec } from '../../core/plugin-api/adapter-kit.js';
import { RowsQuery, type FieldDescription, type NativeStatement } from './pg-statement.js';
import { StatementCanceller, type CancellableClient } from './postgres-cancel.js';
import { postgresCodec, postgresTypeParsers } from './postgres-types.js';

/** A pooled pg client: it runs a Submittable (pg.Query), and can be cancelled (postgres-cancel.ts). */
export interface StreamingClient extends CancellableClient {
  query(query: pg.Query): unknown;
}

/** The part of one pg result the statement's end reads. */
interface PgResultShape {
  rowCount?: number | null;
}

const EMPTY: QueryResult = { columns: [], rows: [], rowCount: 0, truncated: false };

/**
 * Runs one statement and reads its rows one by one as they arrive (RowsQuery: the server's text, decoded by
 * the connection's type parsers), each kept within `options.maxRows` and `options.maxBytes`
 * (ResultBuilder): the statement still costs one round trip, and no more than the budget is held. Once a
 * limit cut the result, or when `options.signal` aborts, the statement is cancelled on the server (a cancel
 * request, sent again until the statement ends), and the promise settles only after the last request was
 * served, so the client returns to its pool with nothing of this statement left to reach the next one. A
 * cut result resolves even though the cancel made the statement fail; an aborted one rejects with the
 * server's 57014.
 *
 * At the runtime's deadline (`options.deadline`: a server that no longer answers) the statement rejects with
 * its 57014 without waiting for the server: its client must then be released as broken.
 *
 * A text of several statements (no values, simple protocol) answers its last result, as knex.raw does.
 */
export function streamStatement(client: StreamingClient, statement: NativeStatement, options: QueryOptions): Promise<QueryResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(canceledByRequest());
  return new Promise<QueryResult>((resolve, reject) => {
    const canceller = new StatementCanceller(client);
    const { cancel } = canceller;
    /** The statement being read, then the last one completed (undefined when it returned no rows). */
    let reading: RowReading | undefined;
    let completed: RowReading | undefined;
    /** A value no parser could read: the statement fails with it once the server is done. */
    let unreadable: unknown;
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      disarm();
      if (signal) offAbort(signal, cancel);
      canceller.ended(outcome);
    };
    // a server that stopped answering enforces no time limit: the statement is given up, its client to be destroyed
    const disarm = onDeadline(options.deadline, (error) => {
      if (settled) return;
      settled = true;
      if (signal) offAbort(signal, cancel);
      canceller.abandon();
      reject(error);
    });
    if (signal) onAbort(signal, cancel);
    const query = new RowsQuery(statement, {
      fields: (fields) => {
        reading = rowReading(fields, options);
      },
      row: (values) => {
        if (reading === undefined || unreadable !== undefined) return;
        try {
          if (!reading.add(values)) cancel();
        } catch (error) {
          unreadable = error;
        }
      },
      complete: () => {
        completed = reading;
        reading = undefined;
      },
    });
    // after a cut, the statement's failure (the cancel, or a later row over the bound) ends only what was cut off
    query.on('error', (error: Error) => settle(() => {
      const cut = reading ?? completed;
      return cut?.builder.done ? resolve(cut.builder.result()) : reject(error);
    }));
    query.on('end', (results: PgResultShape | PgResultShape[]) => {
      const last = Array.isArray(results) ? results.at(-1) : results;
      if (unreadable !== undefined) settle(() => reject(unreadable));
      else settle(() => resolve(last === undefined ? EMPTY : (completed?.builder ?? new ResultBuilder([], options)).result(last.rowCount ?? 0)));
    });
    client.query(query);
  });
}

/** A result being read: its builder, and the parser of each column's text. */
interface RowReading {
  builder: ResultBuilder;
  add(values: readonly (string | null)[]): boolean;
}

type TextParser = (text: string) => unknown;

/**
 * The columns and parsers of a RowDescription's fields, by the fields' identity: a prepared statement's
 * later runs hand over the very array its first Describe answered (pg-statement.ts).
 */
const layouts = new WeakMap<readonly FieldDescription[], { columns: (ValueCodec & { name: string })[]; parsers: TextParser[] }>();

function layoutOf(fields: readonly FieldDescription[]) {
  let layout = layouts.get(fields);
  if (layout === undefined) {
    layout = {
      columns: fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) })),
      parsers: fields.map((field) => postgresTypeParsers.getTypeParser(field.dataTypeID, 'text')),
    };
    layouts.set(fields, layout);
  }
  return layout;
}

function rowReading(fields: readonly FieldDescription[], options: QueryOptions): RowReading {
  const { columns, parsers } = layoutOf(fields);
  const builder = new ResultBuilder(columns, options);
  const decoded: unknown[] = new Array(fields.length);
  return {
    builder,
    add(values) {
      for (let at = 0; at < values.length; at++) {
        const value = values[at];
        decoded[at] = value === null || value === undefined ? null : (parsers[at] as TextParser)(value);
      }
      return builder.addValues(decoded);
    },
  };
}

/** The error a statement whose request ended before it was sent fails with, as the server's would read. */
function canceledByRequest(): Error {
  return Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
}
