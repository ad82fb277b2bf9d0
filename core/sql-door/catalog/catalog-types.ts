/** The contract between the SQL front door and the catalog responder (re-exported by index.ts). */
import type { CatalogForeignKey, LogicalType } from '../../plugin-api/catalog.js';

/** One answer as the wire protocol sends it: PostgreSQL type OIDs and values in PostgreSQL's text format. */
export interface CatalogAnswer {
  fields: { name: string; typeOid: number }[];
  rows: (string | null)[][];
  /** The command tag of CommandComplete, e.g. `SELECT 3` or `SHOW`. */
  command: string;
}

/** A statement described without running it (the extended protocol's Describe of a prepared statement). */
export interface CatalogDescription {
  /** Type OIDs of `$1`, `$2`... as PostgreSQL infers them (ParameterDescription). */
  paramTypeOids: number[];
  /** The result's fields (RowDescription); empty for a statement without result. */
  fields: { name: string; typeOid: number }[];
}

/** What bounds one catalog statement, as the data path bounds its statements; each is optional. */
export interface CatalogLimits {
  /** The client's cancel: 57014, and the statement stops. */
  signal?: AbortSignal;
  /** Bytes the answer's values may hold (`server.maxResultBytes`): more is 54000. */
  maxBytes?: number;
  /** The statement's time limit, when shorter than the responder's: past it, 57014. */
  timeoutMs?: number;
  /** Who asks (the caller's identity): one caller's statements run one at a time, others' beside them. */
  owner?: string;
}

export interface CatalogResponder {
  /** True when the statement reads pg_catalog / information_schema / catalog functions only. */
  handles(sql: string): boolean;
  /**
   * The first function a statement `handles` claims calls that neither the catalog functions nor `allowed`
   * (the data path's allow-list for the caller's VDB) allow, as written; undefined when none.
   */
  refusedFunction(sql: string, allowed: (name: string) => boolean): string | undefined;
  /** Starts making what the first answer needs (in the background), so that it does not wait for it. */
  prepare(): void;
  /**
   * Runs the statement on the caller's mirror, read-only and time-limited; `params` in PostgreSQL's text form. Rejects with a `CatalogQueryError`
   * (SQLSTATE `code`, PostgreSQL's `detail`, `hint`, `position`) when the statement fails there.
   * `searchPath`: the client's own (`SET search_path`, pg_dump's `set_config('search_path', '', false)`),
   * for this statement only; else the mirror's, the VDB's schemas.
   */
  answer(sql: string, params: readonly (string | null)[], caller: CatalogCaller, limits?: CatalogLimits, searchPath?: string): Promise<CatalogAnswer>;
  /**
   * Parameter types and fields of a statement `handles` claims, without running it: what Describe of a
   * prepared statement answers before any Bind (postgres.js asks it of every statement). Rejects like `answer`.
   */
  describe(sql: string, caller: CatalogCaller, limits?: CatalogLimits): Promise<CatalogDescription>;
  /** Ends every mirror's worker thread; later answers fail. */
  close(): Promise<void>;
}

/** Who asks: the VDB version and what its grants let it see (`callerCatalog` builds it). */
export interface CatalogCaller {
  vdb: string;
  version: string;
  /** Names the grant set: callers with the same key see the same relations and share one mirror. */
  grantsKey: string;
  /**
   * The database role the caller's statements run as on the datasource (core/authorization/role-plan.ts):
   * the mirror's session user, owner of every shell, so `current_user` and psql's Owner column show it.
   */
  role: string;
  relations: VisibleRelation[];
  /** The VDB's functions the grants let the caller execute. */
  functions: VisibleFunction[];
}

/** A function of the VDB the caller may execute: its mirror holds a shell of it (no body, returns NULL). */
export interface VisibleFunction {
  schema: string;
  name: string;
  kind: 'function' | 'aggregate' | 'procedure';
  /** The input arguments' logical types; empty when the dialect does not report them. */
  argumentTypes: LogicalType[];
  /** The return's logical type; absent for a procedure. */
  returns?: LogicalType;
}

/** A relation of the VDB cut to the caller's grants: only the columns it may select. */
export interface VisibleRelation {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  /** `withTimeZone`: a timestamp holding an instant, `timestamptz` in the mirror. */
  /** `nativeType`: as the datasource names it (`CatalogColumn.nativeType`). */
  columns: { name: string; nativeType: string; logicalType: LogicalType; nullable: boolean; withTimeZone?: boolean }[];
  /** Empty unless every key column is visible. */
  primaryKey: string[];
  /**
   * Foreign keys whose columns the caller sees at both ends (JDBC's getImportedKeys, psql's "Referenced
   * by"); absent: none. An addition to the door's contract, which `callerCatalog` fills.
   */
  foreignKeys?: CatalogForeignKey[];
}
