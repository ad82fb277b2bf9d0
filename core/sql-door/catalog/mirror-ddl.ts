/**
 * The DDL of a caller's mirror: a schema per visible schema, an empty table (or view) per visible relation
 * with exactly the visible columns, of their types (`columnType`), a shell per function the caller may
 * execute, all owned by the caller's database role. The mirror is always PostgreSQL (PGlite), whatever the
 * VDB's backend, so names are quoted as PostgreSQL quotes them.
 */
import type { LogicalType } from '../../plugin-api/catalog.js';
import { SERVER_VERSION, SERVER_VERSION_NUM } from '../server-version.js';
import type { CatalogCaller, VisibleFunction, VisibleRelation } from './catalog-types.js';

/**
 * The mirror is PGlite: its own `version()` and `current_setting('server_version')` would describe PGlite
 * (18.x, wasm32), not the server the door reports at startup. The door's functions of the same names live
 * in `pg_toast`, a schema every PostgreSQL server has and clients leave out of their schema lists (psql's
 * `\dn`, JDBC's `getSchemas`): a schema of the door's own would show in `pg_namespace`. A catalog
 * statement's calls are renamed to them (catalog-statement.ts): the answer's column keeps its name.
 */
export const SERVER_SCHEMA = 'pg_toast';
export const SERVER_FUNCTIONS: ReadonlySet<string> = new Set(['version', 'current_setting']);

/** The door's server functions (SERVER_SCHEMA), with what it reports in place of PGlite's. */
function serverFunctions(): string[] {
  const setting = (fallback: string) => `select case pg_catalog.lower($1) when 'server_version' then ${literal(SERVER_VERSION)} `
    + `when 'server_version_num' then ${literal(SERVER_VERSION_NUM)} else ${fallback} end`;
  return [
    `grant usage on schema ${SERVER_SCHEMA} to public`,
    `create function ${SERVER_SCHEMA}.version() returns text language sql immutable as ${literal(`select ${literal(`PostgreSQL ${SERVER_VERSION}`)}`)}`,
    `create function ${SERVER_SCHEMA}.current_setting(text) returns text language sql stable as ${literal(setting('pg_catalog.current_setting($1)'))}`,
    `create function ${SERVER_SCHEMA}.current_setting(text, boolean) returns text language sql stable as ${literal(setting('pg_catalog.current_setting($1, $2)'))}`,
  ];
}

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
 * The statements creating the mirror's shells. `public` goes unless the caller sees a relation or function
 * in it, and the session's search path becomes the visible schemas, so psql's `\dt` lists them as it lists a
 * server's tables on its search path. The one database is the VDB (`retail@1`), for `current_database()`
 * and `\l`.
 *
 * PGlite's session always logs in as its bootstrap superuser, and a session may always return to the role
 * it logged in as (`set_config('session_authorization', ...)`): a mirror whose session merely switched to
 * another role could switch back to the superuser. So the bootstrap role itself becomes the caller's
 * database role, once everything is created: renamed, and stripped of SUPERUSER and every other attribute.
 * From then on the session is that role and can become no other; it owns the database, its schemas and
 * shells, so `current_user`, `session_user` and the owners psql shows are the role the datasource runs the
 * caller's statements as.
 */
export function mirrorDdl(caller: Pick<CatalogCaller, 'vdb' | 'version' | 'role' | 'relations' | 'functions'>): string {
  const { relations, functions } = caller;
  const schemas = [...new Set([...relations, ...functions].map((item) => item.schema))];
  // a superuser may edit the catalogs (the current database cannot be renamed otherwise); the snapshot
  // has no template databases (mirror-worker.ts)
  const statements = [
    `update pg_catalog.pg_database set datname = ${literal(`${caller.vdb}@${caller.version}`)} where datname = current_database()`,
    ...serverFunctions(),
  ];
  if (!schemas.includes('public')) statements.push('drop schema public cascade');
  for (const schema of schemas) if (schema !== 'public') statements.push(`create schema ${quote(schema)}`);
  for (const relation of relations) statements.push(relation.kind === 'view' ? viewShell(relation) : tableShell(relation));
  statements.push(...foreignKeys(relations));
  statements.push(...functionShells(functions));
  const path = schemas.length === 0 ? "''" : schemas.map(quote).join(', ');
  // the session's setting: each answer runs in a transaction that is rolled back, so a client's
  // set_config('search_path', ...) never outlives its statement
  statements.push(`set search_path = ${path}`);
  // last (oid 10 is PostgreSQL's BOOTSTRAP_SUPERUSERID): the session is no superuser from here on, the role
  // cache following the catalog at once
  statements.push(`update pg_catalog.pg_authid set rolname = ${literal(caller.role)}, rolsuper = false, rolinherit = false, rolcreaterole = false, `
    + 'rolcreatedb = false, rolreplication = false, rolbypassrls = false where oid = 10');
  return statements.map((statement) => `${statement};\n`).join('');
}

/**
 * The types, as PostgreSQL's `format_type` names them, a column of each logical type may show as when its
 * datasource names its type so (a PostgreSQL or PGlite datasource, whose catalog reads `format_type`): the
 * column then shows its real type (`character varying(80)`, `numeric(10,2)`), as pg_dump, psql's `\d` and
 * JDBC's getColumns show a server's. Any other name (another database's, such as MySQL's `varchar(80)` or
 * `tinyint(1)`; an enum or domain the mirror does not hold) shows as its logical type does.
 */
const NATIVE_TYPES: Readonly<Record<LogicalType, RegExp>> = {
  string: /^(text|character varying(\(\d+\))?|character(\(\d+\))?)$/,
  integer: /^(integer|smallint)$/,
  bigint: /^bigint$/,
  decimal: /^numeric(\(\d+(,\d+)?\))?$/,
  float: /^(real|double precision)$/,
  boolean: /^boolean$/,
  date: /^date$/,
  time: /^time(\(\d\))? without time zone$/,
  timestamp: /^timestamp(\(\d\))? with(out)? time zone$/,
  json: /^jsonb?$/,
  uuid: /^uuid$/,
  binary: /^bytea$/,
};

/**
 * A column's type: its native type when PostgreSQL names it so (NATIVE_TYPES), else its logical type's; a
 * timestamp holding an instant is `timestamptz`, as the door sends its values.
 */
function columnType(column: VisibleRelation['columns'][number]): string {
  const { nativeType, logicalType } = column;
  const zoned = column.withTimeZone === true && logicalType === 'timestamp';
  if (NATIVE_TYPES[logicalType].test(nativeType) && zoned === nativeType.endsWith(' with time zone')) return nativeType;
  return zoned ? 'timestamp with time zone' : POSTGRES_TYPE_OF[logicalType];
}

function tableShell(relation: VisibleRelation): string {
  const columns = relation.columns.map((column) => `${quote(column.name)} ${columnType(column)}${column.nullable ? '' : ' not null'}`);
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
  const columns = relation.columns.map((column) => `null::${columnType(column)} as ${quote(column.name)}`);
  return `create view ${qualified(relation)} as select ${columns.join(', ')} where false`;
}

/**
 * A shell per function: its signature and return type, a body returning NULL (a procedure: doing nothing),
 * so `\df` and JDBC's getFunctions/getProcedures list it; an aggregate shows as a function (an aggregate
 * needs a state function, which would be one more function to show). A name given twice with the same
 * arguments (a dialect reporting none) is created once.
 */
function functionShells(functions: readonly VisibleFunction[]): string[] {
  const statements = new Map<string, string>();
  for (const fn of functions) {
    const signature = `${qualified(fn)}(${fn.argumentTypes.map((type) => POSTGRES_TYPE_OF[type]).join(', ')})`;
    if (statements.has(signature)) continue;
    statements.set(signature, fn.kind === 'procedure' || fn.returns === undefined
      ? `create procedure ${signature} language sql as ''`
      : `create function ${signature} returns ${POSTGRES_TYPE_OF[fn.returns]} language sql immutable as ${literal(`select null::${POSTGRES_TYPE_OF[fn.returns]}`)}`);
  }
  return [...statements.values()];
}

function qualified(relation: { schema: string; name: string }): string {
  return `${quote(relation.schema)}.${quote(relation.name)}`;
}

function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
