/**
 * Catalog introspection for the SQL front door (docs/sql-catalog.md): the statements psql, JDBC drivers and
 * BI tools send to `pg_catalog` and `information_schema` are answered from a mirror holding empty shells of
 * exactly the relations and columns the caller may see, whatever the VDB's backend.
 */
import type { LogicalType } from '../../plugin-api/catalog.js';

/** One answer as the wire protocol sends it: PostgreSQL type OIDs and values in PostgreSQL's text format. */
export interface CatalogAnswer {
  fields: { name: string; typeOid: number }[];
  rows: (string | null)[][];
  /** The command tag of CommandComplete, e.g. `SELECT 3` or `SHOW`. */
  command: string;
}

export interface CatalogResponder {
  /** True when the statement reads pg_catalog / information_schema / catalog functions only. */
  handles(sql: string): boolean;
  /**
   * Runs the statement on the caller's mirror, read-only and time-limited. Rejects with a `CatalogQueryError`
   * (SQLSTATE `code`, PostgreSQL's `detail`, `hint`, `position`) when the statement fails there.
   */
  answer(sql: string, params: unknown[], caller: CatalogCaller): Promise<CatalogAnswer>;
  /** Ends every mirror's worker thread; later answers fail. */
  close(): Promise<void>;
}

/** Who asks: the VDB version and what its grants let it see (`callerCatalog` builds it). */
export interface CatalogCaller {
  vdb: string;
  version: string;
  /** Names the grant set: callers with the same key see the same relations and share one mirror. */
  grantsKey: string;
  relations: VisibleRelation[];
}

/** A relation of the VDB cut to the caller's grants: only the columns it may select. */
export interface VisibleRelation {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  columns: { name: string; logicalType: LogicalType; nullable: boolean }[];
  /** Empty unless every key column is visible. */
  primaryKey: string[];
}

export { CatalogQueryError } from './catalog-query-error.js';
export { callerCatalog } from './caller-catalog.js';
export { createCatalogResponder, type CatalogResponderOptions } from './catalog-responder.js';
