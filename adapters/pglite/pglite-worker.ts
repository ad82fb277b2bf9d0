/**
 * The worker thread of a PGlite datasource: holds the one PGlite instance and runs what the main thread
 * asks (pglite-messages.ts). It lives here, off the event loop, because PGlite runs
 * a statement synchronously to its end and knows no statement_timeout: the main thread bounds a statement
 * by terminating this thread. It imports PGlite and nothing of the core, so a reopen stays cheap.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import type { PgliteAnswers, PgliteReply, PgliteRequest, SessionScope, WireError } from './pglite-messages.js';
import { pgliteTypeParsers } from './pglite-types.js';

if (parentPort === null) throw new Error('pglite-worker.js runs as a worker thread');
const port: MessagePort = parentPort;

let db: PGlite | undefined;
/** The scope the session is set to (role and read-only mode), as `role\0readOnly`; undefined: the login's own. */
let sessionScope: string | undefined;

// The main thread sends one request at a time (pglite-host.ts).
port.on('message', (request: PgliteRequest) => void answer(request));

async function answer(request: PgliteRequest): Promise<void> {
  let reply: PgliteReply;
  let trapped = false;
  try {
    reply = { id: request.id, value: await perform(request) };
  } catch (error) {
    reply = { id: request.id, error: wireError(error) };
    // WebAssembly.RuntimeError: the only error of that name
    trapped = error instanceof Error && error.name === 'RuntimeError';
  }
  try {
    // a snapshot moves rather than being copied
    const moved = 'value' in reply && reply.value instanceof Uint8Array ? [reply.value.buffer as ArrayBuffer] : [];
    port.postMessage(reply, moved);
  } catch (error) {
    // a value structured clone cannot carry
    port.postMessage({ id: request.id, error: wireError(error) } satisfies PgliteReply);
  }
  // a WASM trap leaves PGlite's memory in no known state: end the thread, the datasource opens another
  if (trapped) process.exit(1);
}

async function perform(request: PgliteRequest): Promise<PgliteAnswers[keyof PgliteAnswers]> {
  switch (request.kind) {
    case 'open': {
      const { dataDir, snapshot, sessionUser, textOids } = request.setup;
      db = await PGlite.create({
        ...(dataDir === undefined ? {} : { dataDir }),
        ...(snapshot === undefined ? {} : { loadDataDir: new Blob([snapshot]) }),
        parsers: pgliteTypeParsers(textOids),
      });
      // PGlite's `username` only runs SET ROLE: session_user stays the superuser, and RESET ROLE is back to it.
      if (sessionUser !== undefined) await db.exec(`set session authorization "${sessionUser.replaceAll('"', '""')}"`);
      sessionScope = undefined;
      return null;
    }
    case 'query': {
      await enterScope(request.scope);
      const result = await opened().query<Record<string, unknown>>(request.sql, request.params);
      // one row past maxRows tells the caller the result was cut; the rest need not cross
      const rows = request.maxRows === undefined ? result.rows : result.rows.slice(0, request.maxRows + 1);
      return { rows, fields: result.fields, affectedRows: result.affectedRows ?? 0 };
    }
    case 'exec':
      await enterScope(undefined);
      await opened().exec(request.sql);
      return null;
    case 'dump': {
      const tarball = await opened().dumpDataDir('gzip');
      return new Uint8Array(await tarball.arrayBuffer());
    }
    case 'close':
      await db?.close();
      db = undefined;
      return null;
  }
}

/**
 * Sets the session to `scope` (SET ROLE, SET default_transaction_read_only) when it is not there already, as
 * PostgreSQL's pooled connections are pinned to one: a caller's statement then costs one call, not four
 * (BEGIN, SET LOCAL, the statement, COMMIT). Undefined puts the session back to its login (SET ROLE NONE),
 * so that the service's own statements and transactions start from it.
 */
async function enterScope(scope: SessionScope | undefined): Promise<void> {
  const key = scope === undefined ? undefined : `${scope.role}\u0000${scope.readOnly}`;
  if (key === sessionScope) return;
  await opened().query(
    "select pg_catalog.set_config('role', $1, false), pg_catalog.set_config('default_transaction_read_only', $2, false)",
    [scope?.role ?? 'none', scope?.readOnly === true ? 'on' : 'off'],
  );
  sessionScope = key;
}

function opened(): PGlite {
  if (db === undefined) throw new Error('PGlite is closed');
  return db;
}

function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), fields: {} };
  const fields: Record<string, string | number> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') fields[key] = value;
  }
  return { name: error.name, message: error.message, fields };
}
