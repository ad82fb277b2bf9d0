/**
 * The catalog part of the Task API's `authorizedContext` (docs/authorization.md, docs/tasks.md): what
 * the caller may select, for the runtime to plan with. It identifies the VDB and catalog revision and never
 * holds a credential or the caller's identity. The semantic part is added by the semantic layer.
 */
import { PerGrantSet } from '../caching/per-grant-set.js';
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { AccessLevel, AuthorizedRelation } from '../plugin-api/task-documents.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { allows, type CallerGrants } from './grants.js';

export interface AuthorizedCatalogContext {
  vdb: { name: string; version: string };
  catalogRevision: string;
  access: AccessLevel;
  relations: AuthorizedRelation[];
  functions: Pick<CatalogFunction, 'schema' | 'name' | 'kind' | 'returnType'>[];
}

/** Derived once per VDB and grant set (both are fixed for the life of the process), frozen because shared. */
const contexts = new PerGrantSet<VirtualDatabase, CallerGrants, AuthorizedCatalogContext>();

export function authorizedContext(vdb: VirtualDatabase, grants: CallerGrants): AuthorizedCatalogContext {
  return contexts.get(vdb, grants, () => deepFreeze(deriveContext(vdb, grants)));
}

function deriveContext(vdb: VirtualDatabase, grants: CallerGrants): AuthorizedCatalogContext {
  const visibleColumns = new Map<string, Set<string>>();
  for (const relation of vdb.catalog.relations) {
    const columns = relation.columns
      .filter((column) => allows(grants, 'select', { schema: relation.schema, relation: relation.name, columns: [column.name] }).allowed)
      .map((column) => column.name);
    if (columns.length > 0) visibleColumns.set(relationKey(relation.schema, relation.name), new Set(columns));
  }
  const sees = (schema: string, relation: string, columns: readonly string[]) => {
    const visible = visibleColumns.get(relationKey(schema, relation));
    return visible !== undefined && columns.every((column) => visible.has(column));
  };

  const relations = vdb.catalog.relations
    .filter((relation) => visibleColumns.has(relationKey(relation.schema, relation.name)))
    .map((relation): AuthorizedRelation => ({
      schema: relation.schema,
      name: relation.name,
      datasource: relation.datasource,
      kind: relation.kind,
      columns: relation.columns
        .filter((column) => sees(relation.schema, relation.name, [column.name]))
        .map(({ name, logicalType, nullable }) => ({ name, logicalType, nullable })),
      primaryKey: sees(relation.schema, relation.name, relation.primaryKey) ? [...relation.primaryKey] : [],
      foreignKeys: relation.foreignKeys
        .filter((key) => sees(relation.schema, relation.name, key.columns) && sees(key.referencedSchema, key.referencedRelation, key.referencedColumns))
        .map((key) => ({ ...key, columns: [...key.columns], referencedColumns: [...key.referencedColumns] })),
    }));

  const functions = vdb.catalog.functions
    .filter((fn) => allows(grants, 'select', { schema: fn.schema, relation: fn.name }).allowed)
    .map(({ schema, name, kind, returnType }) => ({ schema, name, kind, returnType }));

  return { vdb: { name: vdb.name, version: vdb.version }, catalogRevision: vdb.catalogRevision, access: accessLevel(vdb, grants, visibleColumns), relations, functions };
}

/**
 * `complete` also for data roles whose grants let the caller select every column of every relation: the
 * runtime may then plan as if nothing were hidden. Any column left out keeps `restricted`. (Writes are
 * still checked against the grants: this is what the caller may read, not a lifted check.)
 */
function accessLevel(vdb: VirtualDatabase, grants: CallerGrants, visibleColumns: ReadonlyMap<string, ReadonlySet<string>>): AccessLevel {
  if (grants.access !== 'restricted') return grants.access;
  const everything = vdb.catalog.relations.every((relation) => {
    const visible = visibleColumns.get(relationKey(relation.schema, relation.name));
    return visible !== undefined && relation.columns.every((column) => visible.has(column.name));
  });
  return everything ? 'complete' : 'restricted';
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

function relationKey(schema: string, name: string): string {
  return `${schema}\u0000${name}`;
}
