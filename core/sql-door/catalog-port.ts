/**
 * What the door asks of the catalog answers (`core/sql-door/catalog/`): the statements clients send to
 * `pg_catalog` and `information_schema` are answered from the VDB's catalog cut to the caller's grants,
 * never from the datasource's. The door hands the responder the relations the caller may see; without a
 * responder, such a statement goes to the analyzer like any other, which refuses system catalogs (42501).
 */
import type { LogicalType } from '../plugin-api/catalog.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { allows, type CallerGrants } from '../authorization/grants.js';

/** The answer to one catalog statement, in PostgreSQL's text form. */
export interface CatalogAnswer {
  fields: { name: string; typeOid: number }[];
  rows: (string | null)[][];
  /** The CommandComplete tag, e.g. `SELECT 3`. */
  command: string;
}

/** A relation of the VDB with only the columns the caller may read. */
export interface VisibleRelation {
  schema: string;
  name: string;
  kind: 'table' | 'view';
  columns: { name: string; logicalType: LogicalType; nullable: boolean }[];
  primaryKey: string[];
}

/** Who asks: the VDB and version connected to, the caller's grant set (a cache key) and what it may see. */
export interface CatalogCaller {
  vdb: string;
  version: string;
  /** The same for two callers with the same grants on the VDB: answers may be cached under it. */
  grantsKey: string;
  relations: VisibleRelation[];
}

export interface CatalogResponder {
  /** True when the statement reads pg_catalog / information_schema / catalog functions only. */
  handles(sql: string): boolean;
  answer(sql: string, params: unknown[], caller: CatalogCaller): Promise<CatalogAnswer>;
}

/**
 * The caller as the responder sees it: every relation of the VDB of which the grants let it read at least
 * one column, with those columns; the primary key only when all its columns are visible.
 */
export function catalogCaller(vdb: VirtualDatabase, grants: CallerGrants): CatalogCaller {
  const relations: VisibleRelation[] = [];
  for (const relation of vdb.catalog.relations) {
    const columns = relation.columns
      .filter((column) => allows(grants, 'select', { schema: relation.schema, relation: relation.name, columns: [column.name] }).allowed)
      .map(({ name, logicalType, nullable }) => ({ name, logicalType, nullable }));
    if (columns.length === 0) continue;
    const visible = new Set(columns.map((column) => column.name));
    const primaryKey = relation.primaryKey.every((name) => visible.has(name)) ? [...relation.primaryKey] : [];
    relations.push({ schema: relation.schema, name: relation.name, kind: relation.kind, columns, primaryKey });
  }
  return { vdb: vdb.name, version: vdb.version, grantsKey: `${grants.access}:${grants.roles.join(',')}`, relations };
}
