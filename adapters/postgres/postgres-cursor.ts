import type { CursorOptions, DatasourceCursor, QueryOptions, QueryResult, ResultColumn } from '../../core/plugin-api/adapter-kit.js';
import { streamStatement, type StreamingClient } from './postgres-stream.js';
import type { ConnectionSource } from './scope-pool.js';

/** The cursor's name on its connection, which holds no other. */
const NAME = 'vdb_cursor';

/**
 * A server-side cursor (`DECLARE … NO SCROLL CURSOR`) over one query, on a connection taken from
 * `connections` (set to the caller's scope: role, read-only, statement time limit) and held, in a
 * transaction of its own, until the cursor is closed. Each fetch is one `FETCH FORWARD n` read as it arrives
 * within its limits (postgres-stream.ts); the door keeps what a scrollable cursor needs. PostgreSQL plans a
 * cursor for its first tenth of rows (`cursor_tuple_fraction`), a nested loop where a hash join reads
 * everything sooner: `allRows` sets it to 1 in the cursor's transaction, in the same round trip as `begin`.
 * @param text the query with `$n` placeholders
 */
export async function openPostgresCursor(
  connections: ConnectionSource, text: string, values: readonly unknown[], options: Pick<CursorOptions, 'signal' | 'deadline' | 'allRows'>,
): Promise<DatasourceCursor> {
  const connection = await connections.acquire();
  const cursor = new PostgresCursor(connections, connection);
  try {
    await streamStatement(connection, { text: options.allRows === true ? 'begin; set local cursor_tuple_fraction = 1' : 'begin', values: [] }, {});
    await streamStatement(connection, { text: `declare ${NAME} no scroll cursor for ${text}`, values: [...values] }, options);
    // a fetch of none, before the first row, describes the result without reading a row
    const described = await cursor.fetch(0, options);
    cursor.columns = described.columns;
    if (described.withTimeZone) cursor.withTimeZone = described.withTimeZone;
  } catch (error) {
    await cursor.close();
    throw error;
  }
  return cursor;
}

class PostgresCursor implements DatasourceCursor {
  columns: ResultColumn[] = [];
  withTimeZone?: string[];
  private closing: Promise<void> | undefined;

  constructor(private readonly connections: ConnectionSource, private readonly connection: StreamingClient) {}

  fetch(count: number, options: Pick<QueryOptions, 'maxBytes' | 'signal' | 'deadline'>): Promise<QueryResult> {
    if (this.closing) return Promise.reject(new Error('the cursor is closed'));
    const howMany = Number.isFinite(count) ? String(Math.max(0, Math.trunc(count))) : 'all';
    return streamStatement(this.connection, { text: `fetch forward ${howMany} from ${NAME}`, values: [] }, options);
  }

  /** Rolls the cursor's read-only transaction back; a connection that cannot is closed rather than reused. */
  close(): Promise<void> {
    this.closing ??= streamStatement(this.connection, { text: 'rollback', values: [] }, {}).then(
      () => this.connections.release(this.connection),
      (error: unknown) => this.connections.release(this.connection, error instanceof Error ? error : new Error(String(error))),
    );
    return this.closing;
  }
}
