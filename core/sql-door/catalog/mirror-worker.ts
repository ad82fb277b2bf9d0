/**
 * The worker thread of one catalog mirror: holds its PGlite instance and answers the commands the main
 * thread sends (mirror-messages.ts) through a WorkerRpc (core/sql/worker-rpc.ts), whose worker side loads
 * this module and calls `perform` for each. Off the event loop because PGlite runs a statement synchronously
 * to its end and knows no statement_timeout: the main thread bounds a statement by terminating this thread.
 */
import { PGlite, protocol, type messages } from '@electric-sql/pglite';
import { boundHeap, cancelRunning, STATEMENT_MEMORY_BYTES } from './mirror-heap.js';
import { TOO_MANY_ROWS, type MirrorAnswers, type MirrorCommand } from './mirror-messages.js';

const { serialize } = protocol;

let db: PGlite | undefined;
/**
 * Temporary files (a sort or hash spilling past work_mem) live in PGlite's in-memory file system, in this
 * thread's memory: as much as a statement may use of the WASM memory. Only a superuser may change it.
 */
const TEMP_FILE_LIMIT_KB = STATEMENT_MEMORY_BYTES / 1024;
/**
 * A mirror holds empty shells: PostgreSQL's default 128 MB of shared buffers would only cache its own
 * catalogs. 8 MB halves a mirror's memory (about 210 MB to 100 MB measured per instance).
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=8MB', '-c', `temp_file_limit=${TEMP_FILE_LIMIT_KB}kB`];

export async function perform(request: MirrorCommand): Promise<MirrorAnswers[keyof MirrorAnswers]> {
  switch (request.kind) {
    case 'open': {
      db = await PGlite.create({ startParams: START_PARAMS, ...(request.snapshot === undefined ? {} : { loadDataDir: new Blob([request.snapshot]) }) });
      if (request.snapshot === undefined) await withoutTemplates(db);
      if (request.ddl !== undefined) await db.exec(request.ddl);
      boundHeap(db);
      return null;
    }
    case 'query':
      return readOnly(request.sql, request.params, request.maxRows, request.maxBytes, request.searchPath);
    case 'describe': {
      // parsed and planned only: nothing runs
      const described = await opened().describeQuery(request.sql);
      return {
        params: described.queryParams.map((param) => param.dataTypeID),
        fields: described.resultFields.map(({ name, dataTypeID }) => ({ name, dataTypeID })),
      };
    }
    case 'dump': {
      const tarball = await opened().dumpDataDir('gzip');
      return new Uint8Array(await tarball.arrayBuffer());
    }
  }
}

/**
 * A mirror never creates a database: a new one drops its templates, a third of the files every mirror opened
 * from its snapshot holds in memory (40 MB to 25 MB). DROP DATABASE runs alone, outside a transaction.
 */
async function withoutTemplates(mirror: PGlite): Promise<void> {
  for (const template of ['template0', 'template1']) {
    await mirror.query(`alter database ${template} is_template false`);
    await mirror.query(`drop database ${template}`);
  }
  await mirror.query('checkpoint');
}

/** The statement in a read-only transaction that is always rolled back: a mirror answers many callers. */
async function readOnly(sql: string, params: readonly (string | null)[], maxRows: number, maxBytes: number, searchPath: string | undefined): Promise<MirrorAnswers['query']> {
  const mirror = opened();
  await mirror.query('begin transaction read only');
  try {
    if (searchPath !== undefined) await mirror.query("select pg_catalog.set_config('search_path', $1, true)", [searchPath]);
    return await bounded(mirror, sql, params, maxRows, maxBytes);
  } catch (error) {
    throw withinBounds(error);
  } finally {
    await mirror.query('rollback');
  }
}

/**
 * The statement's answer, read from PostgreSQL's messages as they stream out while it runs (extended
 * protocol). The first row past `maxRows`, or past `maxBytes` of values (4 bytes per value plus its text,
 * as a DataRow carries them), cancels the statement, which stops at once: a flood of rows ends then, not
 * at its time limit, and nothing past the limits is kept.
 */
async function bounded(mirror: PGlite, sql: string, params: readonly (string | null)[], maxRows: number, maxBytes: number): Promise<MirrorAnswers['query']> {
  const answer: MirrorAnswers['query'] = { fields: [], rows: [] };
  let bytes = 0;
  let over: string | undefined;
  let failed: Error | undefined;
  const parser = new protocol.Parser();
  const exchange = Buffer.concat([
    serialize.parse({ text: sql }), serialize.bind({ values: [...params] }), serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync(),
  ]);
  // runs inside the statement (PGlite runs it synchronously): it must never throw
  const read = (message: messages.BackendMessage) => {
    if (message instanceof protocol.messages.DataRowMessage) {
      if (over !== undefined) return;
      // the message's length holds its own 4 bytes and the 2 of its value count besides the values
      bytes += message.length - 6;
      if (answer.rows.length >= maxRows) over = `a catalog answer holds at most ${maxRows} rows`;
      else if (bytes > maxBytes) over = `the result is larger than ${maxBytes} bytes (server.maxResultBytes)`;
      if (over === undefined) answer.rows.push(message.fields as (string | null)[]);
      else cancelRunning(mirror);
    } else if (message instanceof protocol.messages.RowDescriptionMessage) {
      answer.fields = message.fields.map(({ name, dataTypeID }) => ({ name, dataTypeID }));
    } else if (message instanceof protocol.messages.DatabaseError) {
      failed ??= message;
    }
  };
  await mirror.execProtocolRawStream(exchange, { onRawData: (chunk) => parser.parse(chunk, read) });
  if (over !== undefined) throw overBudget(over);
  if (failed !== undefined) throw failed;
  return answer;
}

/** The memory bound (mirror-heap.ts) and the temporary file limit answer as the result budget does. */
function withinBounds(error: unknown): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code !== '53200' && code !== '53400') return error;
  return overBudget(`the statement needs more memory than a catalog statement may use (${STATEMENT_MEMORY_BYTES / 1024 / 1024} MiB)`);
}

function overBudget(message: string): Error {
  return Object.assign(new Error(message), { code: TOO_MANY_ROWS });
}

function opened(): PGlite {
  if (db === undefined) throw new Error('the catalog mirror is not open');
  return db;
}
