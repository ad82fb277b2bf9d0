/**
 * The worker thread of a PGlite datasource: holds the one PGlite instance and answers the commands the main
 * thread sends (pglite-messages.ts) through the adapter kit's WorkerRpc, whose worker side loads this module
 * and calls `perform` for each, one at a time in the order sent. It lives off the event loop because PGlite
 * runs a statement synchronously to its end and knows no statement_timeout: the main thread bounds a
 * statement by terminating this thread. It imports PGlite and nothing of the core (only types, which
 * vanish), so a reopen stays cheap.
 */
import { PGlite } from '@electric-sql/pglite';
import { CallerStatements, rowSize } from './pglite-exchange.js';
import type { PgliteAnswers, PgliteCommand } from './pglite-messages.js';
import { pgliteTypeParsers } from './pglite-types.js';

let db: PGlite | undefined;
let callers: CallerStatements | undefined;
/** Whether the session may be away from its login's own role and mode (a caller's statement ran last). */
let scoped = false;

export async function perform(request: PgliteCommand): Promise<PgliteAnswers[keyof PgliteAnswers]> {
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
      callers = new CallerStatements(db);
      scoped = false;
      return null;
    }
    case 'query': {
      if (request.scope !== undefined) {
        if (callers === undefined) throw new Error('PGlite is closed');
        scoped = true;
        return await callers.run(request.scope, request.sql, request.params, request, request.planEachRun === true);
      }
      await leaveScope();
      const result = await opened().query<Record<string, unknown>>(request.sql, request.params);
      return { rows: withinLimits(result.rows, request.maxRows, request.maxBytes), fields: result.fields, affectedRows: result.affectedRows ?? 0 };
    }
    case 'exec':
      await leaveScope();
      await opened().exec(request.sql);
      return null;
    case 'dump': {
      const tarball = await opened().dumpDataDir('gzip');
      return new Uint8Array(await tarball.arrayBuffer());
    }
    case 'close':
      await db?.close();
      db = undefined;
      callers = undefined;
      return null;
  }
}

/**
 * The rows that cross to the main thread: one past `maxRows`, or past `maxBytes`, tells it the result was
 * cut; the rest need not cross. A row's size here is at most its JSON's (the main thread counts exactly,
 * after encoding), so no row the main thread would keep is left behind.
 */
function withinLimits(rows: Record<string, unknown>[], maxRows: number | undefined, maxBytes: number | undefined): Record<string, unknown>[] {
  const kept = maxRows === undefined ? rows : rows.slice(0, maxRows + 1);
  if (maxBytes === undefined) return kept;
  let bytes = 2;
  for (const [index, row] of kept.entries()) {
    bytes += rowSize(row);
    if (bytes > maxBytes) return kept.slice(0, index + 1);
  }
  return kept;
}

/**
 * Puts the session back to its login (SET ROLE NONE, read-write by default) after a caller's statement,
 * before the service's own statements and transactions. A caller's statement sets its own scope every
 * time, in the same exchange (pglite-exchange.ts), never assuming the last one's: so a statement which got
 * past the analyzer and changed its session cannot hand that to the next caller, and the reset is only
 * needed here.
 */
async function leaveScope(): Promise<void> {
  if (!scoped) return;
  await opened().query("select pg_catalog.set_config('role', 'none', false), pg_catalog.set_config('default_transaction_read_only', 'off', false)");
  scoped = false;
}

function opened(): PGlite {
  if (db === undefined) throw new Error('PGlite is closed');
  return db;
}
