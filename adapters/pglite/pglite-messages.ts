/**
 * The commands a PGlite datasource (main thread) sends its worker thread (pglite-worker.ts) through the
 * adapter kit's WorkerRpc, and what each answers. Everything crosses by structured clone, so values keep
 * their types (numbers, booleans, bytes, parsed JSON, text).
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

/** A command, as the main thread words it. */
export type PgliteCommand =
  | { kind: 'open'; setup: PgliteSetup }
  /**
   * One statement with `$n` parameters (extended protocol). At most `maxRows` + 1 rows cross back, and only
   * while their size stays within `maxBytes` (plus the row that overran it): the main thread then cuts exactly.
   * With `scope` it runs as that role (read-only where asked): the worker sets the session to the scope in the
   * same protocol exchange as the statement, every time (pglite-exchange.ts); every other command puts the
   * session back to its login first.
   */
  | { kind: 'query'; sql: string; params: unknown[]; maxRows?: number; maxBytes?: number; scope?: SessionScope; planEachRun?: true }
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
