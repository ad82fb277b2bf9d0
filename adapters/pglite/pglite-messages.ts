/**
 * The messages between a PGlite datasource (main thread) and its worker thread (pglite-worker.ts). Each
 * request carries an id; the worker answers it with one reply of the same id. Everything crosses by
 * structured clone, so values keep their types (numbers, booleans, bytes, parsed JSON, text).
 */

/** How the worker opens its database. */
export interface PgliteSetup {
  /** Absolute folder of the database files; absent: in memory. */
  dataDir?: string;
  /** In memory: the state to start from, a tarball of PGlite's `dumpDataDir`. */
  snapshot?: Uint8Array;
  /** The login the session runs as (SET SESSION AUTHORIZATION); absent: the bootstrap superuser. */
  sessionUser?: string;
  /** Types PGlite must hand back as PostgreSQL's text (pglite-types.ts). */
  textOids: readonly number[];
}

/** The part of a PGlite result that crosses back: rows (within the query's limits, plus one) and their fields. */
export interface PgliteRows {
  rows: Record<string, unknown>[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows: number;
}

/** The database role a caller's statement runs as, and whether it may only read. */
export interface SessionScope {
  role: string;
  readOnly: boolean;
}

/** A request without its id, as the main thread words it. */
export type PgliteCommand =
  | { kind: 'open'; setup: PgliteSetup }
  /**
   * One statement with `$n` parameters (extended protocol). At most `maxRows` + 1 rows cross back, and only
   * while their size stays within `maxBytes` (plus the row that overran it): the main thread then cuts exactly.
   * With `scope` it runs as that role (read-only where asked): the worker sets the session to the scope in the
   * same protocol exchange as the statement, every time (pglite-exchange.ts); every other command puts the
   * session back to its login first.
   */
  | { kind: 'query'; sql: string; params: unknown[]; maxRows?: number; maxBytes?: number; scope?: SessionScope }
  /** A script of any number of statements, without parameters (simple protocol). */
  | { kind: 'exec'; sql: string }
  /** The database files as a gzipped tarball. */
  | { kind: 'dump' }
  | { kind: 'close' };

/** What each command answers. */
export interface PgliteAnswers {
  open: null;
  query: PgliteRows;
  exec: null;
  dump: Uint8Array;
  close: null;
}

/**
 * A command as it crosses to the worker, with when its time is up (`Date.now()` ms): one whose deadline passed
 * while it waited behind others is answered 57014 without running.
 */
export type PgliteRequest = PgliteCommand & { id: number; deadline: number };

/** An error as it crosses: structured clone keeps an Error's message, not PostgreSQL's fields (code, detail...). */
export interface WireError {
  name: string;
  message: string;
  /** The error's own string and number properties: `code` (SQLSTATE), `detail`, `hint`, `position`... */
  fields: Record<string, string | number>;
}

/** The worker's answer to the request of the same id: its value, or the error it failed with. */
export type PgliteReply = { id: number; value: PgliteAnswers[keyof PgliteAnswers] } | { id: number; error: WireError };
