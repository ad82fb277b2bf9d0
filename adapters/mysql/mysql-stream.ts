import { offAbort, onAbort, onDeadline, type QueryOptions, type QueryResult, ResultBuilder } from '../../core/plugin-api/adapter-kit.js';
import { mysqlCodec, type MysqlField } from './mysql-types.js';

/** The part of mysql2's Query (an event emitter when given no callback) the rows are read from. */
interface MysqlQuery {
  on(event: 'fields', listener: (fields: MysqlField[] | undefined) => void): MysqlQuery;
  on(event: 'result', listener: (row: Record<string, unknown>, index?: number) => void): MysqlQuery;
  on(event: 'error', listener: (error: Error) => void): MysqlQuery;
  on(event: 'end', listener: () => void): MysqlQuery;
}

/**
 * A pooled mysql2 connection (callback API): it runs a statement, and names its server thread. A query run
 * without a callback learns nothing of a lost connection: mysql2 reports it on the connection.
 */
export interface StreamingConnection {
  readonly threadId: number | null;
  query(sql: string, values: readonly unknown[]): MysqlQuery;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
  /** The socket: destroying it fails the command waiting on it (mysql2's own `destroy()` ends it politely). */
  readonly stream: { destroy(): void };
}

/** Ends the statement `connection` runs (`KILL QUERY` from another connection); never rejects. */
export type QueryKiller = (connection: StreamingConnection) => Promise<void>;

/**
 * A `KILL QUERY` that reaches the server before the statement began is spent on an idle thread: until the
 * statement ends, it is sent again after this pause.
 */
const KILL_AGAIN_MS = 500;

/**
 * Errors of a statement ended on the server: MariaDB's `max_statement_time` (1969), MySQL's
 * `max_execution_time` (3024), and `KILL QUERY` (1317). They fail with SQLSTATE 57014, as the plugin API
 * asks of every dialect (`QueryOptions.timeoutMs`).
 */
const ENDED_ON_SERVER = new Set([1969, 3024, 1317]);

/**
 * Runs one statement and reads its rows one by one as mysql2 parses them (a Query without a callback keeps
 * none itself), each kept within `options.maxRows` and `options.maxBytes` (ResultBuilder): the statement
 * still costs one round trip, and no more than the budget is held. Once a limit cut the result, or when
 * `options.signal` aborts, the statement is ended on the server (`kill`, sent again until the statement
 * ends), and the promise settles only after the last kill was served, so the connection returns to its
 * pool with nothing of this statement left to reach the next one. A cut result resolves even though the
 * kill made the statement fail; an aborted one rejects with 57014.
 *
 * A lost connection (reported on the connection, not the query) rejects at once with the driver's error, and
 * so does a statement at the runtime's deadline (`options.deadline`: a server that no longer answers, with
 * 57014): either way the connection must then be destroyed.
 *
 * A CALL's several result sets answer the first, as knex.raw's callers read it.
 */
export function streamStatement(connection: StreamingConnection, sql: string, bindings: readonly unknown[], options: QueryOptions, kill: QueryKiller): Promise<QueryResult> {
  const { signal } = options;
  if (signal?.aborted) return Promise.reject(endedOnServer(new Error('the statement\'s request or task ended before it was sent')));
  return new Promise<QueryResult>((resolve, reject) => {
    let builder: ResultBuilder | undefined;
    let affectedRows = 0;
    /** The kill in flight: the connection goes back to its pool only once it has been served. */
    let killing: Promise<void> | undefined;
    let again: NodeJS.Timeout | undefined;
    let settled = false;
    const sendKill = () => {
      killing = kill(connection).then(() => {
        if (!settled) again = setTimeout(sendKill, KILL_AGAIN_MS);
      });
    };
    const stop = () => {
      if (killing === undefined) sendKill();
    };
    /** Ends the statement's watch: no kill is sent any more, the listeners are off the reused connection. */
    const finish = () => {
      settled = true;
      clearTimeout(again);
      disarm();
      connection.removeListener('error', lost);
      if (signal) offAbort(signal, stop);
    };
    const settle = (outcome: () => void) => {
      if (settled) return;
      finish();
      void (killing ?? Promise.resolve()).then(outcome);
    };
    // the connection is gone (lost, or given up at the deadline): nothing of the statement can reach a later
    // one, so no kill in flight is awaited; the caller destroys the connection
    const abandon = (error: Error) => {
      if (settled) return;
      finish();
      reject(error);
    };
    const lost = (error: Error) => abandon(error);
    const disarm = onDeadline(options.deadline, abandon);
    connection.on('error', lost);
    if (signal) onAbort(signal, stop);
    const query = connection.query(sql, bindings);
    // only the first result set is read; a statement without one (DML) gives its header as a 'result'
    let first = true;
    query.on('fields', (fields) => {
      if (first && fields !== undefined) builder = new ResultBuilder(fields.map((field) => ({ name: field.name, ...mysqlCodec(field) })), options);
      first = false;
    });
    query.on('result', (row, index = 0) => {
      if (index > 0) return;
      if (builder === undefined) affectedRows = Number((row as { affectedRows?: unknown }).affectedRows ?? 0);
      else if (!builder.add(row)) stop();
    });
    // after a cut, the statement's failure (the kill) ends only what was cut off
    query.on('error', (error) => settle(() => (builder?.done ? resolve(builder.result()) : reject(ENDED_ON_SERVER.has(errnoOf(error)) ? endedOnServer(error) : error))));
    query.on('end', () => settle(() => resolve((builder ?? new ResultBuilder([])).result(affectedRows))));
  });
}

function errnoOf(error: Error): number {
  const { errno } = error as { errno?: unknown };
  return typeof errno === 'number' ? errno : 0;
}

/** The driver's error as the plugin API's 57014 (`query_canceled`), the server's kept as its cause. */
function endedOnServer(error: Error): Error {
  return Object.assign(new Error(`the statement was ended on the server: ${error.message}`, { cause: error }), { code: '57014' });
}
