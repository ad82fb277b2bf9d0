/**
 * The DDL of a caller's mirror: a schema per visible schema, an empty table (or view) per visible relation
 * with exactly the visible columns, typed from their logical types. The mirror is always PostgreSQL (PGlite),
 * whatever the VDB's backend, so names are quoted as PostgreSQL quotes them.
 */
import type { LogicalType } from '../../plugin-api/catalog.js';
import type { CatalogCaller, VisibleRelation } from './catalog-types.js';

/** The PostgreSQL type a logical type shows as in the catalogs (docs/logical-types.md, read backwards). */
const POSTGRES_TYPE_OF: Readonly<Record<LogicalType, string>> = {
  string: 'text',
  integer: 'integer',
  bigint: 'bigint',
  decimal: 'numeric',
  float: 'double precision',
  boolean: 'boolean',
  date: 'date',
  time: 'time without time zone',
  timestamp: 'timestamp without time zone',
  json: 'json',
  uuid: 'uuid',
  binary: 'bytea',
};

/**
 * The statements creating the mirror's shells. `public` goes unless the caller sees a relation in it, and
 * the session's search path becomes the visible schemas, so psql's `\dt` lists them as it lists a
 * server's tables on its search path. The one database is the VDB (`retail@1`), for `current_database()`
 * and `\l`.
 */
export function mirrorDdl(caller: Pick<CatalogCaller, 'vdb' | 'version' | 'relations'>): string {
  const { relations } = caller;
  const schemas = [...new Set(relations.map((relation) => relation.schema))];
  // a superuser may edit the catalogs (the current database cannot be renamed otherwise); the snapshot
  // has no template databases (mirror-worker.ts)
  const statements = [
    `update pg_catalog.pg_database set datname = ${literal(`${caller.vdb}@${caller.version}`)} where datname = current_database()`,
  ];
  if (!schemas.includes('public')) statements.push('drop schema public cascade');
  for (const schema of schemas) if (schema !== 'public') statements.push(`create schema ${quote(schema)}`);
  for (const relation of relations) statements.push(relation.kind === 'view' ? viewShell(relation) : tableShell(relation));
  statements.push(...foreignKeys(relations));
  const path = schemas.length === 0 ? "''" : schemas.map(quote).join(', ');
  // the session's setting: each answer runs in a transaction that is rolled back, so a client's
  // set_config('search_path', ...) never outlives its statement
  statements.push(`set search_path = ${path}`);
  return statements.map((statement) => `${statement};\n`).join('');
}

function tableShell(relation: VisibleRelation): string {
  const columns = relation.columns.map((column) => `${quote(column.name)} ${POSTGRES_TYPE_OF[column.logicalType]}${column.nullable ? '' : ' not null'}`);
  if (relation.primaryKey.length > 0) columns.push(`primary key (${relation.primaryKey.map(quote).join(', ')})`);
  return `create table ${qualified(relation)} (${columns.join(', ')})`;
}

/**
 * The foreign keys between tables of the mirror. PostgreSQL wants a unique key on the referenced columns,
 * and the mirror holds primary keys only: a key referencing other columns is left out.
 */
function foreignKeys(relations: readonly VisibleRelation[]): string[] {
  const tables = new Map(relations.filter((relation) => relation.kind === 'table').map((relation) => [`${relation.schema}.${relation.name}`, relation]));
  const statements: string[] = [];
  for (const relation of tables.values()) {
    for (const key of relation.foreignKeys ?? []) {
      const referenced = tables.get(`${key.referencedSchema}.${key.referencedRelation}`);
      if (referenced === undefined || !sameColumns(referenced.primaryKey, key.referencedColumns)) continue;
      statements.push(`alter table ${qualified(relation)} add constraint ${quote(key.name)} foreign key (${key.columns.map(quote).join(', ')}) `
        + `references ${qualified(referenced)} (${key.referencedColumns.map(quote).join(', ')})`);
    }
  }
  return statements;
}

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((column) => b.includes(column));
}

/** A view of no rows with the visible columns and their types: what the catalogs show of a view. */
function viewShell(relation: VisibleRelation): string {
  const columns = relation.columns.map((column) => `null::${POSTGRES_TYPE_OF[column.logicalType]} as ${quote(column.name)}`);
  return `create view ${qualified(relation)} as select ${columns.join(', ')} where false`;
}

function qualified(relation: VisibleRelation): string {
  return `${quote(relation.schema)}.${quote(relation.name)}`;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
