/**
 * The second gate (docs/governed-execution.md): every statement run for a caller runs as the database role
 * of the caller's grants, so the database refuses what the grants do not cover even when the SQL analyzer,
 * the first gate, let it through.
 */
import { LruCaches } from '../caching/lru-cache.js';
import { deny, denialError } from '../plugin-api/denial.js';
import type {
  Datasource, DatasourceCursor, ExecutionScope, QueryOptions, SqlDialect, SqlExecutor, WireForwardOptions, WireForwardOutcome, WireStatement,
} from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { CallerGrants } from './grants.js';
import { callerRole } from './role-plan.js';

/** How a route runs a caller's statements. */
export interface CallerRun {
  /** The route only reads (query endpoints, assertions, waits, task queries): the database refuses writes. */
  readOnly: boolean;
  /** Each statement's time limit: `server.requestTimeoutMs` on endpoints, the action timeout in tasks. */
  timeoutMs: number;
  /**
   * Where set (query endpoints, task queries: statements whose text the caller shapes), the server refuses
   * any row larger than this before sending it (`SqlDialect.boundRowBytes`): no value the process cannot
   * hold reaches the driver. The result budget of the route: a row over it could never be answered.
   */
  maxRowBytes?: number;
  /** Aborted when the request or task has ended: a statement still running is cancelled on the server. */
  signal?: AbortSignal | undefined;
}

/** A caller's statements on one datasource. */
export interface CallerExecutor extends SqlExecutor {
  /** Runs `work` in one transaction, its statements under the same role and limits. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Where the datasource offers it (`Datasource.forwardWire`): one statement of a PostgreSQL-protocol client
   * forwarded as it is, under the same role, read-only mode and time limit.
   */
  forwardWire?(statement: WireStatement, options: Omit<WireForwardOptions, 'scope' | 'timeoutMs'>): Promise<WireForwardOutcome>;
  /** Where the datasource offers it (`Datasource.openCursor`): a cursor over one query, under the same role, read-only mode and time limit. */
  openCursor?(sql: string, bindings: readonly unknown[], signal: AbortSignal): Promise<DatasourceCursor>;
}

/**
 * Runs a caller's statements on `datasource` as the database role of their grants on `vdb`. Where the
 * dialect's database does not enforce roles yet (`capabilities.enforcesRoles` false), as the service's login,
 * the analyzer being the only gate.
 * @throws ForbiddenError when no database role stands for the grants: no data role of the VDB, or several
 *   of a VDB with too many to combine.
 */
export function callerExecutor(datasource: Datasource, vdb: VirtualDatabase, grants: CallerGrants, run: CallerRun): CallerExecutor {
  const scope = executionScope(datasource, vdb, grants, run.readOnly);
  const { timeoutMs, maxRowBytes, signal } = run;
  // an executor kept for one statement (the SQL door's) builds its bounded text once, not on every run
  let lastSql: string | undefined;
  let lastBounded = '';
  const executor: CallerExecutor = {
    query: (sql, bindings, options) => {
      // one object of one shape per statement: spreading the caller's options costs more than the statement's own work here
      const limited: QueryOptions = { maxRows: options?.maxRows, maxBytes: options?.maxBytes, timeoutMs, scope, signal: signal ?? options?.signal };
      if (maxRowBytes === undefined) return datasource.query(sql, bindings, limited);
      if (sql !== lastSql) {
        lastSql = sql;
        lastBounded = boundedText(datasource.dialect, sql);
      }
      return lastBounded === sql ? datasource.query(sql, bindings, limited) : datasource.query(lastBounded, [...bindings, maxRowBytes], limited);
    },
    transaction: (work) => datasource.transaction(work, { scope, timeoutMs }),
  };
  // set only where offered: a request of the query endpoint builds no forwarding closure it never uses
  const forward = datasource.forwardWire;
  if (forward !== undefined) {
    executor.forwardWire = (statement: WireStatement, { signal, maxBytes, send }: Omit<WireForwardOptions, 'scope' | 'timeoutMs'>) => (
      forward.call(datasource, statement, { signal, maxBytes, send, timeoutMs, scope }));
  }
  const openCursor = datasource.openCursor;
  if (openCursor !== undefined) {
    executor.openCursor = (sql, bindings, opening) => {
      const bounded = maxRowBytes === undefined ? sql : boundedText(datasource.dialect, sql);
      const values = bounded === sql ? bindings : [...bindings, maxRowBytes];
      return openCursor.call(datasource, bounded, values, { timeoutMs, scope, signal: signal ?? opening });
    };
  }
  return executor;
}

/**
 * Bounded texts by dialect, then by text. An endpoint's statement recurs with every request as the same
 * string, so its bounded text is the same string too: built once, and hashed once where a datasource keys a
 * cache by it (a new string of the same text costs its building and its hashing on every request).
 */
const boundedTexts = new LruCaches<SqlDialect, string, string>(500);
/** Longer texts are bounded on each run, so the cache stays small whatever callers send. */
const MAX_CACHED_SQL_LENGTH = 64 * 1024;

/** `sql` bounded by the dialect, or `sql` itself where the dialect bounds no row. */
function boundedText(dialect: SqlDialect, sql: string): string {
  const cache = boundedTexts.of(dialect);
  const cached = cache.get(sql);
  if (cached !== undefined) return cached;
  const bounded = dialect.boundRowBytes(sql) ?? sql;
  if (sql.length <= MAX_CACHED_SQL_LENGTH) cache.set(sql, bounded);
  return bounded;
}

/** One scope object per role and mode: adapters may keep what they set up for a scope by its identity. */
const scopes = new Map<string, { readOnly: ExecutionScope; readWrite: ExecutionScope }>();

function executionScope(datasource: Datasource, vdb: VirtualDatabase, grants: CallerGrants, readOnly: boolean): ExecutionScope | undefined {
  if (!datasource.dialect.capabilities.enforcesRoles) return undefined;
  const role = callerRole(vdb, grants, datasource.dialect.maxRoleNameBytes);
  if (role === undefined) {
    const reason = grants.access === 'unavailable'
      ? 'the caller has no data role on this VDB'
      : `the caller holds ${grants.roles.length} data roles of VDB ${vdb.name}, which has too many to combine in one database role`;
    throw denialError(deny('forbidden', reason));
  }
  let pair = scopes.get(role);
  if (!pair) scopes.set(role, (pair = { readOnly: Object.freeze({ role, readOnly: true }), readWrite: Object.freeze({ role, readOnly: false }) }));
  return readOnly ? pair.readOnly : pair.readWrite;
}

