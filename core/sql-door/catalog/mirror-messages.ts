/**
 * The commands a catalog mirror (main thread, mirror-thread.ts) sends its worker (mirror-worker.ts) through
 * a WorkerRpc (core/sql/worker-rpc.ts), and what each answers.
 */

export type MirrorCommand =
  /** Opens PGlite: from `snapshot` (a `dumpDataDir` tarball) when given, else a new database without templates; then runs `ddl`. */
  | { kind: 'open'; snapshot?: Uint8Array; ddl?: string }
  /**
   * One statement with `$n` parameters (PostgreSQL's text form), read-only and rolled back, under `searchPath`
   * when given; at most `maxRows` rows, and values of at most `maxBytes` bytes with 4 per value (a DataRow's
   * length field), within the memory bound of mirror-heap.ts: past any of them, 54000.
   */
  | { kind: 'query'; sql: string; params: readonly (string | null)[]; maxRows: number; maxBytes: number; searchPath?: string }
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

/** SQLSTATE program_limit_exceeded: an answer with more rows or bytes than a catalog answer may have. */
export const TOO_MANY_ROWS = '54000';
