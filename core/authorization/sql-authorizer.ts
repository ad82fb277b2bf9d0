/**
 * Authorizes one SQL text against the caller's grants (docs/authorization.md): a single statement,
 * read-only where asked, every relation, column and function within the VDB and within the grants.
 * Parsing fails closed. What depends only on the text (the parse and its facts) is cached by family and
 * text; binding to the catalog and checking the grants are cheap and run each time.
 */
import type { CatalogFunction } from '../plugin-api/catalog.js';
import type { SqlFamily } from '../plugin-api/sql-dialect.js';
import type { DataAction, VdbCatalog, VdbRelation } from '../vdb/vdb-types.js';
import { catalogIndex } from './catalog-index.js';
import { deny, isDenial, type Denial } from './denial.js';
import { LruCache } from '../caching/lru-cache.js';
import { genericStatementFacts, prepareGenericParser } from './generic-statement-facts.js';
import { allows, type CallerGrants } from './grants.js';
import { postgresStatementFacts, preparePostgresParser } from './postgres-statement-facts.js';
import type { StatementFacts, StatementKind } from './statement-facts.js';
import { resolveStatement, type ResolvedStatement } from './statement-resolver.js';

export interface SqlAuthorizationRequest {
  sql: string;
  family: SqlFamily;
  grants: CallerGrants;
  catalog: VdbCatalog;
  /** Allow only a reading SELECT (task actions, queries, assertions, waits). */
  readOnly: boolean;
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

/** Per family, keyed by the text itself (a string keeps its hash, so a repeated text is not hashed again). */
const factsCaches = new Map<SqlFamily, LruCache<string, StatementFacts | Denial>>();

/** Loads the parsers of these families now rather than on the first statement (optional, e.g. at startup). */
export async function prepareAuthorizer(families: readonly SqlFamily[]): Promise<void> {
  await Promise.all(families.map((family) => (family === 'postgres' ? preparePostgresParser() : prepareGenericParser(family))));
}

/**
 * Whole decisions, per catalog and grant set (both fixed for the life of the process and shared by every
 * request of the same callers), then by family, mode and text: a repeated endpoint query skips the
 * resolution and the grant checks too.
 */
const decisionCaches = new WeakMap<VdbCatalog, WeakMap<CallerGrants, LruCache<string, SqlAuthorization>>>();

export async function authorizeSql(request: SqlAuthorizationRequest): Promise<SqlAuthorization> {
  if (request.sql.length > CACHED_SQL_MAX_LENGTH) return decide(request);
  let byGrants = decisionCaches.get(request.catalog);
  if (!byGrants) decisionCaches.set(request.catalog, (byGrants = new WeakMap()));
  let cache = byGrants.get(request.grants);
  if (!cache) byGrants.set(request.grants, (cache = new LruCache(CACHE_ENTRIES)));
  const key = `${request.family}\u0000${request.readOnly ? 'r' : 'w'}\u0000${request.sql}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const decision = await decide(request);
  cache.set(key, decision);
  return decision;
}

async function decide(request: SqlAuthorizationRequest): Promise<SqlAuthorization> {
  const { grants, readOnly } = request;
  const facts = await statementFacts(request.sql, request.family);
  if (isDenial(facts)) return facts;
  if (grants.access === 'unavailable') return deny('forbidden', 'the caller has no data role on this VDB');
  if (readOnly && facts.kind !== 'select') return deny('not_read_only', `${facts.label} is not read-only: only SELECT can run here`);
  if (readOnly && facts.writes !== undefined) return deny('not_read_only', `${facts.writes}: only reading statements can run here`);
  if (facts.unsupported !== undefined) return deny('forbidden', facts.unsupported);
  const resolved = resolveStatement(facts, catalogIndex(request.catalog, request.family), request.family);
  if (isDenial(resolved)) return resolved;
  return checkGrants(resolved, grants) ?? { allowed: true, facts: describe(facts, resolved) };
}

async function statementFacts(sql: string, family: SqlFamily): Promise<StatementFacts | Denial> {
  let cache = factsCaches.get(family);
  if (!cache) factsCaches.set(family, (cache = new LruCache(CACHE_ENTRIES)));
  const cached = cache.get(sql);
  if (cached) return cached;
  let facts: StatementFacts | Denial;
  if (family === 'postgres') {
    await preparePostgresParser();
    facts = postgresStatementFacts(sql);
  } else {
    facts = await genericStatementFacts(sql, family);
  }
  if (sql.length <= CACHED_SQL_MAX_LENGTH) cache.set(sql, facts);
  return facts;
}

/** The first access the grants do not cover, as a denial naming the relation or column. */
function checkGrants(resolved: ResolvedStatement, grants: CallerGrants): Denial | undefined {
  if (grants.access === 'complete') return undefined;
  for (const access of resolved.accesses) {
    const check = allows(grants, access.action, { schema: access.relation.schema, relation: access.relation.name, columns: access.columns });
    if (!check.allowed) return deny('forbidden', check.reason, check.resource);
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
