/**
 * The worker thread of one catalog mirror: holds its PGlite instance and runs what the main thread asks
 * (mirror-messages.ts). Off the event loop because PGlite runs a statement synchronously to its end and
 * knows no statement_timeout: the main thread bounds a statement by terminating this thread.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { TOO_MANY_ROWS, type MirrorAnswers, type MirrorError, type MirrorReply, type MirrorRequest } from './mirror-messages.js';

if (parentPort === null) throw new Error('mirror-worker.js runs as a worker thread');
const port: MessagePort = parentPort;

let db: PGlite | undefined;
/**
 * A mirror holds empty shells: PostgreSQL's default 128 MB of shared buffers would only cache its own
 * catalogs. 8 MB halves a mirror's memory (about 210 MB to 100 MB measured per instance).
 */
const START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=8MB'];
/** Every type PGlite would parse, kept as the text the server sent: the wire protocol sends text. */
let asText: Record<number, (value: string) => string> = {};

port.on('message', (request: MirrorRequest) => void answer(request));

async function answer(request: MirrorRequest): Promise<void> {
  let reply: MirrorReply;
  let ending = false;
  try {
    reply = { id: request.id, value: await perform(request) };
  } catch (error) {
    reply = { id: request.id, error: mirrorError(error) };
    // a WASM trap (the only RuntimeError) leaves PGlite's memory in no known state
    ending = error instanceof Error && error.name === 'RuntimeError';
  }
  // WASM memory never shrinks: a statement that made PGlite grow it (a large value) ends the thread, which
  // gives it back; a small answer over the budget does not
  ending ||= heapBytes() > heapAtOpen + HEAP_GROWTH_LIMIT;
  const moved = 'value' in reply && reply.value instanceof Uint8Array ? [reply.value.buffer as ArrayBuffer] : [];
  port.postMessage(ending ? { ...reply, ending: true as const } : reply, moved);
  if (ending) process.exit(1);
}

/** How much PGlite's WASM memory may grow past its size once opened before the thread ends. */
const HEAP_GROWTH_LIMIT = 128 * 1024 * 1024;
let heapAtOpen = 0;

/** The size of PGlite's WASM memory: its Emscripten module's heap, which PGlite does not type. */
function heapBytes(): number {
  return (db as unknown as { mod?: { HEAPU8?: Uint8Array } } | undefined)?.mod?.HEAPU8?.byteLength ?? 0;
}

async function perform(request: MirrorRequest): Promise<MirrorAnswers[keyof MirrorAnswers]> {
  switch (request.kind) {
    case 'open': {
      db = await PGlite.create({ startParams: START_PARAMS, ...(request.snapshot === undefined ? {} : { loadDataDir: new Blob([request.snapshot]) }) });
      if (request.snapshot === undefined) await withoutTemplates(db);
      if (request.ddl !== undefined) await db.exec(request.ddl);
      const types = await db.query<[number]>('select oid from pg_catalog.pg_type', [], { rowMode: 'array' });
      asText = Object.fromEntries(types.rows.map(([oid]) => [oid, (value: string) => value]));
      heapAtOpen = heapBytes();
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
async function readOnly(sql: string, params: unknown[], maxRows: number, maxBytes: number, searchPath: string | undefined): Promise<MirrorAnswers['query']> {
  const mirror = opened();
  await mirror.query('begin transaction read only');
  try {
    if (searchPath !== undefined) await mirror.query("select pg_catalog.set_config('search_path', $1, true)", [searchPath]);
    const result = await mirror.query<(string | null)[]>(sql, params, { rowMode: 'array', parsers: asText });
    if (result.rows.length > maxRows) {
      throw Object.assign(new Error(`a catalog answer holds at most ${maxRows} rows`), { code: TOO_MANY_ROWS });
    }
    let bytes = 0;
    for (const row of result.rows) {
      for (const value of row) bytes += 4 + (value === null ? 0 : Buffer.byteLength(value));
      if (bytes > maxBytes) {
        throw Object.assign(new Error(`the result is larger than ${maxBytes} bytes (server.maxResultBytes)`), { code: TOO_MANY_ROWS });
      }
    }
    return { fields: result.fields.map(({ name, dataTypeID }) => ({ name, dataTypeID })), rows: result.rows };
  } finally {
    await mirror.query('rollback');
  }
}

function opened(): PGlite {
  if (db === undefined) throw new Error('the catalog mirror is not open');
  return db;
}

function mirrorError(error: unknown): MirrorError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: Record<string, string> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key] = String(value);
  }
  return { message: error.message, fields };
}
