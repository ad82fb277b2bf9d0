/**
 * The messages between a catalog mirror (main thread, mirror-thread.ts) and its worker (mirror-worker.ts).
 * Each request carries an id; the worker answers it with one reply of the same id.
 */

/** A request without its id. */
export type MirrorCommand =
  /** Opens PGlite: from `snapshot` (a `dumpDataDir` tarball) when given, else a new database without templates; then runs `ddl`. */
  | { kind: 'open'; snapshot?: Uint8Array; ddl?: string }
  /** One statement with `$n` parameters, read-only and rolled back; at most `maxRows` rows; under `searchPath` when given. */
  | { kind: 'query'; sql: string; params: unknown[]; maxRows: number; searchPath?: string }
  /** The parameter types and result fields of a statement, without running it (Describe of a prepared statement). */
  | { kind: 'describe'; sql: string }
  /** The database as a gzipped tarball, to open others from. */
  | { kind: 'dump' };

export interface MirrorRows {
  fields: { name: string; dataTypeID: number }[];
  /** Values in PostgreSQL's text format, as the server sent them to PGlite. */
  rows: (string | null)[][];
}

export interface MirrorDescription {
  /** Type OIDs of `$1`, `$2`... as the server infers them. */
  params: number[];
  fields: { name: string; dataTypeID: number }[];
}

export interface MirrorAnswers {
  open: null;
  query: MirrorRows;
  describe: MirrorDescription;
  dump: Uint8Array;
}

export type MirrorRequest = MirrorCommand & { id: number };

/** An error as it crosses: its message and PostgreSQL's fields (`code`, `detail`, `hint`, `position`). */
export interface MirrorError {
  message: string;
  fields: Record<string, string>;
}

export type MirrorReply = { id: number; value: MirrorAnswers[keyof MirrorAnswers] } | { id: number; error: MirrorError };

/** SQLSTATE program_limit_exceeded: an answer with more rows than a catalog answer may have. */
export const TOO_MANY_ROWS = '54000';
