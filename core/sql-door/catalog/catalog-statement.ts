/**
 * Which statements the catalog mirror answers: one SELECT (or SHOW) that reads only PostgreSQL's catalogs,
 * or, without any relation, calls only catalog and session functions (`SELECT version()`,
 * `current_schema()`, `current_setting('...')`). Anything reading a relation of another schema, writing, or
 * locking is the datasource's: the mirror holds no data, so it must never answer a statement that reads some.
 */
import { loadModule, parseSync } from 'libpg-query';
import { LruCache } from '../../caching/lru-cache.js';
import { SERVER_FUNCTIONS, SERVER_SCHEMA } from './mirror-ddl.js';

type PgObject = { [field: string]: unknown };

/** Schemas whose relations are PostgreSQL's own catalogs. */
const CATALOG_SCHEMAS: ReadonlySet<string> = new Set(['pg_catalog', 'information_schema']);

/** Functions drivers call without a FROM to learn about the session and server (besides `pg_*` ones). */
const CATALOG_FUNCTIONS: ReadonlySet<string> = new Set([
  'version', 'current_schema', 'current_schemas', 'current_setting', 'set_config', 'current_database',
  'format_type', 'obj_description', 'col_description', 'shobj_description',
  'has_table_privilege', 'has_schema_privilege', 'has_database_privilege', 'has_column_privilege', 'has_function_privilege',
]);

/**
 * `current_schema`, `current_catalog` and the session's role (`current_user`, `session_user`...), written
 * without parentheses, are SQL value functions. The mirror's session is the caller's database role, the role
 * the datasource runs its statements as, whatever the backend.
 */
const CATALOG_VALUE_FUNCTIONS: ReadonlySet<string> = new Set([
  'SVFOP_CURRENT_SCHEMA', 'SVFOP_CURRENT_CATALOG', 'SVFOP_CURRENT_USER', 'SVFOP_CURRENT_ROLE', 'SVFOP_SESSION_USER', 'SVFOP_USER',
]);

/**
 * Catalog columns older clients still name but the mirror's PostgreSQL renamed: psql 15 and 16 read
 * `pg_database.daticulocale` for `\l`, `datlocale` since PostgreSQL 17. The reference is renamed in the
 * text the mirror runs (the answer keeps the client's column alias, which psql gives).
 */
const RENAMED_COLUMNS: ReadonlyMap<string, string> = new Map([['daticulocale', 'datlocale']]);

/**
 * Catalog columns whose default changed: PostgreSQL 17 made a column's default statistics target NULL, where
 * older servers hold -1, and pg_dump 15 and 16 read NULL as 0 (a `SET STATISTICS 0` for every column). Selected
 * without an alias, such a column is selected as its old default where NULL, under its own name.
 */
const NULL_DEFAULTS: ReadonlyMap<string, string> = new Map([['attstattarget', '-1']]);

/** Nodes that write, wherever they sit (a data-modifying CTE). */
const WRITING_NODES: ReadonlySet<string> = new Set(['InsertStmt', 'UpdateStmt', 'DeleteStmt', 'MergeStmt']);

let loading: Promise<void> | undefined;

/** Loads the PostgreSQL grammar (WASM) once; `catalogStatement` needs it. */
export function loadCatalogGrammar(): Promise<void> {
  return (loading ??= loadModule());
}

/** A statement the mirror answers: its kind, and the text to run there. */
export interface CatalogStatement {
  readonly kind: 'select' | 'show';
  /**
   * The statement with renamed catalog columns (RENAMED_COLUMNS) spelled as the mirror spells them, and
   * calls of the server's functions (`version()`, `current_setting(...)`) as calls of the door's own.
   */
  readonly mirrorSql: string;
  /** The functions it calls, for the function allow-list (catalog-functions.ts). */
  readonly calls: readonly CatalogCall[];
}

/** A function call of a catalog statement. */
export interface CatalogCall {
  /** The schema written before the name, if any (`pg_catalog`, `information_schema`). */
  readonly schema: string | undefined;
  /** The name as the grammar folded it (PostgreSQL: lower case unless quoted). */
  readonly name: string;
  /** The first argument when it is a string constant (`set_config('search_path', ...)`). */
  readonly firstArgument: string | undefined;
}

/**
 * The door asks about every statement, and clients repeat theirs (a driver's metadata queries, a
 * dashboard's refresh): decisions on texts up to CACHED_TEXT_LENGTH are kept.
 */
const decisions = new LruCache<string, CatalogStatement | null>(1_000);
const CACHED_TEXT_LENGTH = 20_000;

/** The statement when the mirror may answer it (see the file's comment), else undefined. */
export function catalogStatement(sql: string): CatalogStatement | undefined {
  if (sql.length > CACHED_TEXT_LENGTH) return decide(sql);
  let decision = decisions.get(sql);
  if (decision === undefined) decisions.set(sql, (decision = decide(sql) ?? null));
  return decision ?? undefined;
}

function decide(sql: string): CatalogStatement | undefined {
  let statements: PgObject[];
  try {
    statements = (parseSync(sql).stmts ?? []) as PgObject[];
  } catch {
    return undefined;
  }
  if (statements.length !== 1) return undefined;
  const statement = statements[0]?.['stmt'] as PgObject | undefined;
  if (statement === undefined) return undefined;
  if ('VariableShowStmt' in statement) return { kind: 'show', mirrorSql: sql, calls: [] };
  const select = statement['SelectStmt'] as PgObject | undefined;
  if (select === undefined || 'intoClause' in select || 'lockingClause' in select) return undefined;
  const uses = new Uses();
  try {
    uses.collect(statement);
  } catch (error) {
    // a tree too deep to walk is no catalog statement a client sends
    if (error instanceof RangeError) return undefined;
    throw error;
  }
  return uses.catalogOnly() ? { kind: 'select', mirrorSql: uses.renamed(sql), calls: uses.calls } : undefined;
}

/** What a statement's tree reads and calls. */
class Uses {
  private readonly relations: { schema: string | undefined; name: string }[] = [];
  private readonly cteNames = new Set<string>();
  private catalogCalls = 0;
  private otherCalls = 0;
  /** Calls of a function of another schema than the catalogs': a VDB function, which only the datasource has. */
  private vdbCalls = 0;
  private writes = false;
  /** Byte offsets (libpg-query counts bytes) of column references and function calls to rename. */
  private readonly renames: Rename[] = [];
  readonly calls: CatalogCall[] = [];

  collect(node: unknown): void {
    if (Array.isArray(node)) {
      for (const item of node) this.collect(item);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node as PgObject)) {
      if (WRITING_NODES.has(key)) this.writes = true;
      else if (key === 'RangeVar') this.relation(value as PgObject);
      else if (key === 'CommonTableExpr') this.cteNames.add(String((value as PgObject)['ctename']));
      else if (key === 'FuncCall') this.call(value as PgObject);
      else if (key === 'ColumnRef') this.column(value as PgObject);
      else if (key === 'ResTarget') this.target(value as PgObject);
      else if (key === 'SQLValueFunction' && CATALOG_VALUE_FUNCTIONS.has(String((value as PgObject)['op']))) this.catalogCalls++;
      this.collect(value);
    }
  }

  catalogOnly(): boolean {
    if (this.writes || this.vdbCalls > 0) return false;
    const read = this.relations.filter((relation) => relation.schema !== undefined || !this.cteNames.has(relation.name));
    if (read.some((relation) => !isCatalogRelation(relation.schema, relation.name))) return false;
    // without a catalog relation, only catalog functions make it a catalog statement (`SELECT 1` is the datasource's)
    return read.length > 0 || (this.catalogCalls > 0 && this.otherCalls === 0);
  }

  /** `sql` with the recorded renames made, from the last so earlier offsets stay right. */
  renamed(sql: string): string {
    if (this.renames.length === 0) return sql;
    let bytes = Buffer.from(sql, 'utf8');
    for (const rename of [...this.renames].sort((a, b) => b.location - a.location)) {
      const span = spanOf(bytes, rename);
      if (span === undefined) continue;
      const to = rename.kind === 'target'
        ? `coalesce(${bytes.subarray(span.start, span.end).toString('utf8')}, ${rename.to}) as ${rename.from}`
        : rename.to;
      bytes = Buffer.concat([bytes.subarray(0, span.start), Buffer.from(to, 'utf8'), bytes.subarray(span.end)]);
    }
    return bytes.toString('utf8');
  }

  private column(node: PgObject): void {
    const fields = (node['fields'] ?? []) as PgObject[];
    const name = (fields[fields.length - 1]?.['String'] as PgObject | undefined)?.['sval'];
    const to = typeof name === 'string' ? RENAMED_COLUMNS.get(name) : undefined;
    if (to !== undefined && typeof node['location'] === 'number') this.renames.push({ kind: 'column', location: node['location'], from: name as string, to });
  }

  private target(node: PgObject): void {
    if (node['name'] !== undefined) return;
    const column = (node['val'] as PgObject | undefined)?.['ColumnRef'] as PgObject | undefined;
    const fields = (column?.['fields'] ?? []) as PgObject[];
    const name = (fields[fields.length - 1]?.['String'] as PgObject | undefined)?.['sval'];
    const fallback = typeof name === 'string' ? NULL_DEFAULTS.get(name) : undefined;
    if (fallback !== undefined && typeof column?.['location'] === 'number') this.renames.push({ kind: 'target', location: column['location'], from: name as string, to: fallback });
  }

  private relation(node: PgObject): void {
    const schema = node['schemaname'];
    this.relations.push({ schema: typeof schema === 'string' ? schema : undefined, name: String(node['relname']) });
  }

  private call(node: PgObject): void {
    const names = ((node['funcname'] ?? []) as PgObject[]).map((part) => String((part['String'] as PgObject | undefined)?.['sval']));
    const name = names[names.length - 1] ?? '';
    const schema = names.length > 1 ? names[names.length - 2] : undefined;
    const catalog = schema === undefined ? CATALOG_FUNCTIONS.has(name) || name.startsWith('pg_') : CATALOG_SCHEMAS.has(schema);
    const first = ((node['args'] ?? []) as PgObject[])[0]?.['A_Const'] as PgObject | undefined;
    const constant = (first?.['sval'] as PgObject | undefined)?.['sval'];
    this.calls.push({ schema, name, firstArgument: typeof constant === 'string' ? constant : undefined });
    if (SERVER_FUNCTIONS.has(name) && (schema === undefined || schema === 'pg_catalog') && typeof node['location'] === 'number') {
      this.renames.push({ kind: 'call', location: node['location'], from: name, to: `${SERVER_SCHEMA}.${name}` });
    }
    if (catalog) this.catalogCalls++;
    else if (schema !== undefined) this.vdbCalls++;
    else this.otherCalls++;
  }
}

/**
 * A rename in a statement's text. A column reference is found by its name from its offset; a call is the
 * name written from its offset to the parenthesis (`version`, `pg_catalog.version`, quoted or spaced); a
 * selected column (`target`) is the reference from its offset to the end of its name, `to` its default.
 */
interface Rename {
  kind: 'column' | 'call' | 'target';
  location: number;
  from: string;
  to: string;
}

function spanOf(bytes: Buffer, { kind, location, from }: Rename): { start: number; end: number } | undefined {
  if (kind === 'column' || kind === 'target') {
    const start = bytes.indexOf(from, location, 'utf8');
    return start < 0 ? undefined : { start: kind === 'target' ? location : start, end: start + Buffer.byteLength(from) };
  }
  const end = bytes.indexOf('(', location, 'utf8');
  if (end < 0) return undefined;
  const written = bytes.subarray(location, end).toString('utf8').replace(/[\s"]/g, '').toLowerCase();
  return written === from || written === `pg_catalog.${from}` ? { start: location, end } : undefined;
}

/** `pg_catalog.x`, `information_schema.x`, or an unqualified `pg_*` name (pg_catalog comes first on any search path). */
function isCatalogRelation(schema: string | undefined, name: string): boolean {
  return schema === undefined ? name.startsWith('pg_') : CATALOG_SCHEMAS.has(schema);
}
