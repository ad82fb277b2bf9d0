/**
 * Authorizes one SQL text against the caller's grants (docs/authorization.md): a single statement of
 * bounded size, read-only where asked, every relation, column and function within the VDB and within the
 * grants, every built-in on the allow-list. The dialect's grammar parses, failing closed. What depends only
 * on the text (the parse and its facts) is cached per grammar and text; resolving against the catalog and checking
 * the grants are cheap and run each time.
 */
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { SqlGrammar } from '../plugin-api/sql-grammar.js';
import type { DataAction, VdbCatalog, VdbRelation } from '../plugin-api/vdb.js';
import { catalogIndex } from './catalog-index.js';
import { deny, isDenial, type Denial } from '../plugin-api/denial.js';
import { LruCache, LruCaches } from '../caching/lru-cache.js';
import { PerGrantSet } from '../caching/per-grant-set.js';
import { allows, type CallerGrants } from './grants.js';
import type { StatementFacts, StatementKind } from '../plugin-api/statement-facts.js';
import { resolveStatement, type ResolvedStatement } from './statement-resolver.js';
import { statementTooLong } from './statement-size.js';
import { DEFAULT_MAX_STATEMENT_BYTES } from '../config/config-schema.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';

export interface SqlAuthorizationRequest {
  /** One statement as knex.raw receives it: `?` per bound value. */
  sql: string;
  /** The dialect of the datasource the statement runs on: its grammar parses, its rules match names and functions. */
  dialect: SqlDialect;
  grants: CallerGrants;
  catalog: VdbCatalog;
  /** Allow only a reading SELECT (task actions, queries, assertions, waits). */
  readOnly: boolean;
  /** The VDB's `allowFunctions`: built-ins it allows beyond the dialect's allow-list. */
  allowFunctions?: readonly string[];
  /** Longer texts are refused unparsed (`sql.maxStatementBytes`); default 65536. */
  maxStatementBytes?: number;
}

export interface RelationAccessFact {
  schema: string;
  name: string;
  /** The datasource holding the relation, to refuse statements that span two. */
  datasource: string;
  action: DataAction;
  /** Columns read or written; empty when the relation is used without naming a column (`count(*)`). */
  columns: string[];
}

/** What an allowed statement does. */
export interface AuthorizedStatement {
  kind: StatementKind;
  /** True when it changes nothing. */
  readOnly: boolean;
  relations: RelationAccessFact[];
  /** The VDB functions it calls; built-ins are not listed. */
  functions: { schema: string; name: string }[];
}

export type SqlAuthorization = { allowed: true; facts: AuthorizedStatement } | Denial;

const CACHE_ENTRIES = 1_000;
/** Longer texts are authorized without caching, so the cache stays small whatever callers send. */
const CACHED_SQL_MAX_LENGTH = 16_384;

/** Per grammar, keyed by the text itself (a string keeps its hash, so a repeated text is not hashed again). */
const factsCaches = new LruCaches<SqlGrammar, string, StatementFacts | Denial>(CACHE_ENTRIES);

/**
 * Whole decisions, per catalog and grant set (both fixed for the life of the process and shared by every
 * request of the same callers), then by dialect, mode and allowFunctions, then by text: a repeated endpoint
 * query skips the resolution and the grant checks too.
 */
const decisionCaches = new PerGrantSet<VdbCatalog, CallerGrants, Map<string, LruCache<string, SqlAuthorization>>>();

export async function authorizeSql(request: SqlAuthorizationRequest): Promise<SqlAuthorization> {
  const tooLong = statementTooLong(request.sql, request.maxStatementBytes ?? DEFAULT_MAX_STATEMENT_BYTES);
  if (tooLong) return tooLong;
  if (request.sql.length > CACHED_SQL_MAX_LENGTH) return decide(request);
  const bySetting = decisionCaches.get(request.catalog, request.grants, () => new Map());
  const setting = settingKey(request.dialect.id, request.readOnly, request.allowFunctions);
  let cache = bySetting.get(setting);
  if (!cache) bySetting.set(setting, (cache = new LruCache(CACHE_ENTRIES)));
  // keyed by the text itself, not by a key built around it: a repeated text keeps its hash
  const cached = cache.get(request.sql);
  if (cached) return cached;
  const decision = await decide(request);
  cache.set(request.sql, decision);
  return decision;
}

/** The keys of a dialect's two modes with one `allowFunctions` list, built once: a string built per request is hashed per request. */
const keysByList = new WeakMap<readonly string[], Map<string, { read: string; write: string }>>();
const NO_FUNCTIONS: readonly string[] = [];

function settingKey(dialectId: string, readOnly: boolean, allowFunctions: readonly string[] = NO_FUNCTIONS): string {
  let byDialect = keysByList.get(allowFunctions);
  if (!byDialect) keysByList.set(allowFunctions, (byDialect = new Map()));
  let keys = byDialect.get(dialectId);
  if (!keys) {
    const functions = allowFunctions.join(',');
    byDialect.set(dialectId, (keys = { read: `${dialectId}\u0000r\u0000${functions}`, write: `${dialectId}\u0000w\u0000${functions}` }));
  }
  return readOnly ? keys.read : keys.write;
}

/**
 * Authorizes a statement of a VDB for these grants, as routes do: in the VDB's dialect, against its catalog
 * and `allowFunctions`, within the service's `sql` bounds. A statement over several datasources is
 * PostgreSQL's dialect whatever the default's (docs/federation.md#doors): on a VDB whose datasources differ in
 * dialect, the text is read as PostgreSQL first, and that reading stands when it reads several datasources;
 * otherwise the text is the default datasource's, read in its dialect.
 */
export async function authorizeVdbStatement(
  handle: Pick<VdbHandle, 'vdb' | 'dialect' | 'federationDialect' | 'sqlBounds' | 'datasourceFor'>, sql: string, grants: CallerGrants, readOnly: boolean,
): Promise<SqlAuthorization> {
  const { vdb, dialect, federationDialect, sqlBounds } = handle;
  const authorizeIn = (reading: SqlDialect) => authorizeSql({
    sql, dialect: reading, grants, catalog: vdb.catalog, readOnly, maxStatementBytes: sqlBounds.maxStatementBytes,
    ...(vdb.allowFunctions === undefined ? {} : { allowFunctions: vdb.allowFunctions }),
  });
  if (federationDialect === dialect || !spansDatasources(vdb)) return authorizeIn(dialect);
  const spans = (decision: SqlAuthorization) => !isDenial(decision) && handle.datasourceFor(decision.facts.relations) === undefined;
  const federated = await authorizeIn(federationDialect);
  if (spans(federated)) return federated;
  const own = await authorizeIn(dialect);
  // several datasources only in the default's reading: PostgreSQL's reading (its refusal) is the one that holds
  return spans(own) ? federated : own;
}

/** Whether the VDB's schemas come from more than one datasource. */
function spansDatasources(vdb: VdbHandle['vdb']): boolean {
  return vdb.schemas.some((schema) => schema.datasource !== vdb.datasource);
}

async function decide(request: SqlAuthorizationRequest): Promise<SqlAuthorization> {
  const { grants, readOnly, dialect } = request;
  const facts = await statementFacts(request.sql, dialect.grammar);
  if (isDenial(facts)) return facts;
  if (grants.access === 'unavailable') return deny('forbidden', 'the caller has no data role on this VDB');
  if (readOnly && facts.kind !== 'select') return deny('not_read_only', `${facts.label} is not read-only: only SELECT can run here`);
  if (readOnly && facts.writes !== undefined) return deny('not_read_only', `${facts.writes}: only reading statements can run here`);
  if (facts.unsupported !== undefined) return deny('forbidden', facts.unsupported);
  const resolved = resolveStatement(facts, catalogIndex(request.catalog, dialect), dialect, request.allowFunctions);
  if (isDenial(resolved)) return resolved;
  return checkGrants(resolved, grants) ?? { allowed: true, facts: describe(facts, resolved) };
}

async function statementFacts(sql: string, grammar: SqlGrammar): Promise<StatementFacts | Denial> {
  const cache = factsCaches.of(grammar);
  const cached = cache.get(sql);
  if (cached) return cached;
  await grammar.load();
  const facts = grammar.statementFacts(sql);
  if (sql.length <= CACHED_SQL_MAX_LENGTH) cache.set(sql, facts);
  return facts;
}

/** The first access the grants do not cover, as a denial naming the relation or column. */
function checkGrants(resolved: ResolvedStatement, grants: CallerGrants): Denial | undefined {
  if (grants.access === 'complete') return undefined;
  for (const access of resolved.accesses) {
    const target = { schema: access.relation.schema, relation: access.relation.name };
    // the columns the statement names first: a refusal may name those
    const named = allows(grants, access.action, { ...target, columns: access.named });
    if (!named.allowed) return deny('forbidden', named.reason, named.resource);
    const check = allows(grants, access.action, { ...target, columns: access.columns });
    if (check.allowed) continue;
    const relation = `${target.schema}.${target.relation}`;
    // a column reached without being named (`*`) is not named: the caller may not know it exists
    if (check.resource === relation) return deny('forbidden', check.reason, check.resource);
    return deny('forbidden', `${access.action} on ${relation} covers only some of its columns, and the statement reaches columns it does not name (*, a whole row, all columns): name the columns`, relation);
  }
  for (const fn of resolved.functions) {
    const check = allows(grants, 'select', { schema: fn.schema, relation: fn.name });
    if (!check.allowed) return deny('forbidden', `calling function ${fn.schema}.${fn.name} is not granted`, `${fn.schema}.${fn.name}`);
  }
  for (const column of resolved.unattributed) {
    const restricted = column.candidates.find((relation) => !coversEveryColumn(grants, relation));
    if (restricted) {
      return deny('forbidden',
        `column ${column.reference} cannot be traced to a relation, and ${restricted.schema}.${restricted.name} has column-level grants`,
        column.reference);
    }
  }
  return undefined;
}

function coversEveryColumn(grants: CallerGrants, relation: VdbRelation): boolean {
  return allows(grants, 'select', { schema: relation.schema, relation: relation.name, columns: relation.columns.map((column) => column.name) }).allowed;
}

function describe(facts: StatementFacts, resolved: ResolvedStatement): AuthorizedStatement {
  return {
    kind: facts.kind,
    readOnly: facts.kind === 'select' && facts.writes === undefined,
    relations: resolved.accesses.map(({ relation, action, columns }) => ({
      schema: relation.schema, name: relation.name, datasource: relation.datasource, action, columns,
    })),
    functions: resolved.functions.map((fn: CatalogFunction) => ({ schema: fn.schema, name: fn.name }))
      .filter((fn, position, all) => all.findIndex((other) => other.schema === fn.schema && other.name === fn.name) === position),
  };
}
