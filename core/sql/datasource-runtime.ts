import { LruCache } from '../caching/lru-cache.js';
import type { Catalog } from '../plugin-api/catalog.js';
import { ServiceError, UnavailableError } from '../plugin-api/errors.js';
import type {
  BuiltStatement, CursorOptions, Datasource, DatasourceCursor, Deadline, ExecutionScope, LoginHoldings, PoolUsage, QueryOptions, QueryResult, RoleLogin, SqlDialect, SqlExecutor,
  TableStatement, TransactionOptions, WireForwardOptions, WireForwardOutcome, WireStatement,
} from '../plugin-api/sql-dialect.js';
import { PING_TIMEOUT_MS, StatementDeadline } from './statement-deadline.js';
import { statementFailure, unavailableError } from './statement-failure.js';
import { failureOutcome, type StatementObserver, type StatementOutcome } from './statement-outcome.js';

/** The bounds of a caller's statements, set by the route that runs them. */
export interface CallerBounds {
  /** Each statement's time limit: `server.requestTimeoutMs` on endpoints, the action timeout in tasks. */
  timeoutMs: number;
  /**
   * Where set (query endpoints, task queries: statements whose text the caller shapes), the server refuses
   * any row larger than this before sending it (`SqlDialect.boundRowBytes`): no value the process cannot
   * hold reaches the driver. The result budget of the route: a row over it could never be answered.
   */
  maxRowBytes?: number | undefined;
  /** Aborted when the request or task has ended: a statement still running is cancelled on the server. */
  signal?: AbortSignal | undefined;
}

/** A caller's statements on one datasource, each under the caller's scope and bounds. */
export interface CallerExecutor extends SqlExecutor {
  /** Runs `work` in one transaction, its statements under the same role and limits. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>): Promise<T>;
  /**
   * Where the datasource offers it (`Datasource.forwardWire`): one statement of a PostgreSQL-protocol client
   * forwarded as it is, under the same role, read-only mode and time limit.
   */
  forwardWire?(statement: WireStatement, options: Omit<WireForwardOptions, 'scope' | 'timeoutMs'>): Promise<WireForwardOutcome>;
  /**
   * Where the datasource offers it (`Datasource.openCursor`): a cursor over one query, under the same role,
   * read-only mode and time limit; `allRows` as `CursorOptions.allRows`.
   */
  openCursor?(sql: string, bindings: readonly unknown[], signal: AbortSignal, allRows?: boolean): Promise<DatasourceCursor>;
}

/**
 * What every view of one adapter's datasource shares: the adapter's datasource and its close. The order of
 * calls is the datasource's own: a pool's, or PGlite's host (adapters/pglite/pglite-host.ts).
 */
interface Lifecycle {
  readonly inner: Datasource;
  closing: Promise<void> | undefined;
}

/** Longer texts are bounded on each run, so the cache of bounded texts stays small whatever callers send. */
const MAX_CACHED_SQL_LENGTH = 64 * 1024;

/**
 * The one runtime seam between the core and an adapter's datasource (Kysely's RuntimeDriver over a
 * driver's connections); every statement of the service passes it once, whatever door it came by:
 *
 * - lifecycle: closes once, refuses calls after close; the order of calls is left to the datasource (a
 *   pool, or PGlite's host);
 * - role scope and bounds: `forCaller` runs a caller's statements under their database role, time limit,
 *   row bound and signal;
 * - cancellation: each statement with a time limit gets one client-side deadline (statement-deadline.ts,
 *   the limit plus a slack), a transaction one re-armed as each of its statements starts and ends; past it
 *   the statement settles with 57014 whatever the adapter does, and the adapter, told by the deadline
 *   of its options (`QueryOptions.deadline`), destroys the connection so that it is never reused;
 * - failures: classified once (`statementFailure`), thrown as the StatementFailure (or, unreachable, the
 *   `UnavailableError('datasource_unavailable')`) every door answers from;
 * - metrics: each statement's outcome and duration, and each refusal of the analyzer (`denied`), reported to
 *   the observer of the service that opened it.
 *
 * A datasource shared by several services in one process (tests) has one lifecycle and one view per
 * service (`observedBy`), each reporting to its own observer under the datasource's name in its config.
 */
export class DatasourceRuntime implements Datasource {
  readonly restrictSession?: (memberOf: readonly string[]) => Promise<void>;
  readonly useRoleLogins?: (logins: readonly RoleLogin[]) => Promise<LoginHoldings[]>;
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;
  readonly openCursor?: (sql: string, bindings: readonly unknown[], options: CursorOptions) => Promise<DatasourceCursor>;
  /**
   * Bounded texts by text. An endpoint's statement recurs with every request as the same string, so its
   * bounded text is built once per runtime rather than on every request.
   */
  private readonly boundedTexts = new LruCache<string, string>(500);
  /** Marks a runtime itself, not an object made from one with Object.create (a test's datasource that fails on demand). */
  readonly #seam = true;

  private constructor(private readonly lifecycle: Lifecycle, private readonly label: string, private readonly observer: StatementObserver | undefined) {
    const { inner } = lifecycle;
    const restrict = inner.restrictSession?.bind(inner);
    if (restrict) this.restrictSession = (memberOf) => this.call(() => restrict(memberOf));
    const useLogins = inner.useRoleLogins?.bind(inner);
    if (useLogins) this.useRoleLogins = (logins) => this.call(() => useLogins(logins));
    const forward = inner.forwardWire?.bind(inner);
    if (forward) this.forwardWire = (statement, options) => this.statement((bounded) => forward(statement, bounded), options, forwardWithin);
    const openCursor = inner.openCursor?.bind(inner);
    if (openCursor) {
      // each fetch is a statement on the database, within the cursor's time limit
      this.openCursor = async (sql, bindings, options) => {
        const cursor = await this.statement((bounded) => openCursor(sql, bindings, bounded), options, cursorWithin);
        return {
          columns: cursor.columns,
          ...(cursor.withTimeZone && { withTimeZone: cursor.withTimeZone }),
          fetch: (count, fetching) => this.measured(() => withinDeadline(options.timeoutMs, fetching, (bounded) => cursor.fetch(count, bounded), fetchWithin), fetching),
          close: () => cursor.close(),
        };
      };
    }
  }

  /** The seam over an adapter's datasource; over a runtime already, that runtime. */
  static over(datasource: Datasource): DatasourceRuntime {
    if (#seam in datasource) return datasource as DatasourceRuntime;
    return new DatasourceRuntime({ inner: datasource, closing: undefined }, datasource.name, undefined);
  }

  /** A view of the same datasource whose statements are reported to `observer` under `label`. */
  observedBy(label: string, observer: StatementObserver): DatasourceRuntime {
    observer.opened(label, this);
    return new DatasourceRuntime(this.lifecycle, label, observer);
  }

  get name(): string { return this.lifecycle.inner.name; }
  get dialect(): SqlDialect { return this.lifecycle.inner.dialect; }

  buildStatement(statement: TableStatement): BuiltStatement {
    return this.lifecycle.inner.buildStatement(statement);
  }

  poolUsage(): PoolUsage | undefined {
    return this.lifecycle.inner.poolUsage?.();
  }

  /** Counts a statement the analyzer refused as `denied`: it never reaches the database. */
  denied(): void {
    this.observer?.statement(this.label, 'denied');
  }

  /** Counts the rows a pushed statement of a federated plan read from this datasource. */
  rowsRead(rows: number): void {
    this.observer?.sourceRows(this.label, rows);
  }

  /** Counts a federated plan this datasource answered with the other sources' rows sent to it. */
  shipped(): void {
    this.observer?.shippedPlan(this.label);
  }

  /** Counts a federated plan over this VDB's datasource by how it ended. */
  federated(outcome: StatementOutcome): void {
    this.observer?.federatedPlan(outcome);
  }

  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    return this.statement((bounded) => this.lifecycle.inner.query(sql, bindings, bounded), options ?? {}, queryWithin);
  }

  /**
   * Statements inside `work` use the transaction's connection, so they are not queued behind it. With a time
   * limit, one deadline covers BEGIN, each statement and COMMIT: re-armed as each statement starts and ends.
   */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    const { inner } = this.lifecycle;
    const timeoutMs = options?.timeoutMs;
    if (timeoutMs === undefined) {
      return this.call(() => inner.transaction((transaction) => work({
        query: (sql, bindings, statement) => this.measured(() => transaction.query(sql, bindings, statement), statement),
      }), options));
    }
    return this.call(() => {
      const deadline = new StatementDeadline(timeoutMs);
      const bounded: EveryField<TransactionOptions> = { scope: options?.scope, timeoutMs, deadline };
      const running = inner.transaction((transaction) => work({
        query: (sql, bindings, statement) => {
          deadline.arm();
          return this.measured(() => transaction.query(sql, bindings, statement), statement).finally(() => deadline.arm());
        },
      }), bounded);
      return settledBy(deadline, running);
    });
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    return this.call(() => this.lifecycle.inner.introspect(schemas));
  }

  /**
   * With the deadline of a statement of PING_TIMEOUT_MS, on which the adapter frees the connection of a
   * server that stopped answering. Not cut short here: a datasource that queues its calls itself (PGlite)
   * answers a ping late while it is busy, not never; the readiness check bounds its wait on its own.
   */
  async ping(): Promise<void> {
    const deadline = new StatementDeadline(PING_TIMEOUT_MS);
    try {
      await this.call(() => this.lifecycle.inner.ping({ deadline }));
    } finally {
      deadline.disarm();
    }
  }

  close(): Promise<void> {
    const { lifecycle } = this;
    lifecycle.closing ??= lifecycle.inner.close();
    return lifecycle.closing;
  }

  /**
   * A caller's statements under `scope` (undefined where the dialect's database does not enforce roles:
   * as the service's login, the analyzer being the only gate) and `bounds`.
   */
  forCaller(scope: ExecutionScope | undefined, bounds: CallerBounds): CallerExecutor {
    const { timeoutMs, maxRowBytes, signal } = bounds;
    // an executor kept for one statement (the SQL door's) looks its bounded text up once, not on every run
    let lastSql: string | undefined;
    let lastBounded = '';
    const executor: CallerExecutor = {
      query: (sql, bindings, options) => {
        // one object of one shape per statement: spreading the caller's options costs more than the statement's own work here
        const limited: QueryOptions = { maxRows: options?.maxRows, maxBytes: options?.maxBytes, timeoutMs, scope, signal: signal ?? options?.signal, planEachRun: options?.planEachRun };
        if (maxRowBytes === undefined) return this.query(sql, bindings, limited);
        if (sql !== lastSql) {
          lastSql = sql;
          lastBounded = this.boundedText(sql);
        }
        return lastBounded === sql ? this.query(sql, bindings, limited) : this.query(lastBounded, [...bindings, maxRowBytes], limited);
      },
      transaction: (work) => this.transaction(work, { scope, timeoutMs }),
    };
    // set only where offered: a request of the query endpoint builds no forwarding closure it never uses
    const forward = this.forwardWire;
    if (forward !== undefined) {
      executor.forwardWire = (statement, { signal: aborted, maxBytes, send }) => forward(statement, { signal: aborted, maxBytes, send, timeoutMs, scope });
    }
    const openCursor = this.openCursor;
    if (openCursor !== undefined) {
      executor.openCursor = (sql, bindings, opening, allRows) => {
        const bounded = maxRowBytes === undefined ? sql : this.boundedText(sql);
        const values = bounded === sql ? bindings : [...bindings, maxRowBytes];
        return openCursor(bounded, values, { timeoutMs, scope, signal: signal ?? opening, ...(allRows === true && { allRows }) });
      };
    }
    return executor;
  }

  /** `sql` bounded by the dialect, or `sql` itself where the dialect bounds no row. */
  private boundedText(sql: string): string {
    const cached = this.boundedTexts.get(sql);
    if (cached !== undefined) return cached;
    const bounded = this.dialect.boundRowBytes(sql) ?? sql;
    if (sql.length <= MAX_CACHED_SQL_LENGTH) this.boundedTexts.set(sql, bounded);
    return bounded;
  }

  /**
   * A statement: refused after close and ordered as every call, within its deadline from when it runs (not
   * while it waits its turn), then reported.
   */
  private statement<T, O extends { timeoutMs?: number | undefined }>(run: (bounded: O) => Promise<T>, options: O, bound: (options: O, deadline: Deadline) => O): Promise<T> {
    const within = () => withinDeadline(options.timeoutMs, options, run, bound);
    return this.observer === undefined ? this.call(within) : this.observed(() => this.call(within), options);
  }

  /** A statement of a transaction, or a cursor's fetch: the call that holds its connection was ordered already. */
  private measured<T>(run: () => Promise<T>, options: QueryOptions | undefined): Promise<T> {
    return this.observer === undefined ? this.classified(run) : this.observed(() => this.classified(run), options);
  }

  /** Reports the outcome and duration of `run`, whose failure is classified already. */
  private async observed<T>(run: () => Promise<T>, options: QueryOptions | undefined): Promise<T> {
    const observer = this.observer as StatementObserver;
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const result = await run();
      observer.statement(this.label, 'ok', seconds());
      return result;
    } catch (error) {
      observer.statement(this.label, failureOutcome(error, options), seconds());
      throw error;
    }
  }

  /** Any call: refused after close, its failure classified. */
  private call<T>(run: () => Promise<T>): Promise<T> {
    if (this.lifecycle.closing) return Promise.reject(new UnavailableError('datasource_unavailable', `datasource "${this.name}" is closed`));
    return this.classified(run);
  }

  private async classified<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw seamError(this.name, error);
    }
  }
}

/**
 * Runs `run` with `options` and, where there is a time limit, one deadline (in the options the adapter
 * receives, made by `bound`): the promise settles with the deadline's 57014 at the latest.
 */
function withinDeadline<T, O>(timeoutMs: number | undefined, options: O, run: (bounded: O) => Promise<T>, bound: (options: O, deadline: Deadline) => O): Promise<T> {
  if (timeoutMs === undefined) return run(options);
  const deadline = new StatementDeadline(timeoutMs);
  return settledBy(deadline, run(bound(options, deadline)));
}

/** Every field of `T`, the optional ones too: a copy of this type names each, so a field added to `T` is copied or fails to compile. */
type EveryField<T> = { [K in keyof Required<T>]: T[K] };

// The options of a statement with its deadline, copied field by field into one literal rather than as
// `{ ...options, deadline }`: on Node 20 (V8 11.3) an object spread and then given a property gets a hidden
// class of its own every time, so each statement made a new map and every read of its options missed V8's
// inline caches (bench/README.md, "Issue 28: the peers regression").
function queryWithin(options: QueryOptions, deadline: Deadline): QueryOptions {
  const { maxRows, maxBytes, timeoutMs, signal, scope, planEachRun } = options;
  const bounded: EveryField<QueryOptions> = { maxRows, maxBytes, timeoutMs, signal, scope, deadline, planEachRun };
  return bounded;
}

function cursorWithin(options: CursorOptions, deadline: Deadline): CursorOptions {
  const { maxRows, maxBytes, timeoutMs, signal, scope, allRows, planEachRun } = options;
  const bounded: EveryField<CursorOptions> = { maxRows, maxBytes, timeoutMs, signal, scope, deadline, allRows, planEachRun };
  return bounded;
}

/** What a cursor's fetch takes (`DatasourceCursor.fetch`). */
type FetchOptions = Parameters<DatasourceCursor['fetch']>[1];

function fetchWithin(options: FetchOptions, deadline: Deadline): FetchOptions {
  const bounded: EveryField<FetchOptions> = { maxBytes: options.maxBytes, signal: options.signal, deadline };
  return bounded;
}

function forwardWithin(options: WireForwardOptions, deadline: Deadline): WireForwardOptions {
  const { scope, timeoutMs, signal, maxBytes, send } = options;
  const bounded: EveryField<WireForwardOptions> = { scope, timeoutMs, signal, maxBytes, send, deadline };
  return bounded;
}

/** `running`, or the deadline's error once it expires first (`running`'s later failure then goes unheard); the deadline disarmed either way. */
function settledBy<T>(deadline: StatementDeadline, running: Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = deadline.onExpire((error) => {
      running.catch(() => undefined);
      reject(error);
    });
    running.then(resolve, reject).finally(() => {
      deadline.disarm();
      stop();
    });
  });
}

/**
 * A failure as it leaves the seam: the service's own errors as they are, an unreachable datasource as
 * `UnavailableError('datasource_unavailable')`, any driver error as the StatementFailure it classifies to.
 * A failure classified already (a transaction's statement, then its transaction) passes as it is.
 */
function seamError(datasource: string, error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  const failure = statementFailure(error);
  return failure.kind === 'unavailable' ? unavailableError(datasource, error) : failure;
}

/** The runtime the core wraps every adapter's datasource in; over a runtime, that runtime. */
export function runtimeOver(datasource: Datasource): DatasourceRuntime {
  return DatasourceRuntime.over(datasource);
}

/**
 * One service's view of a datasource: every statement it runs, in a transaction or not, and every refusal
 * of the analyzer is reported to the service's observer under `name`, the datasource's key in the config (a
 * datasource handed in by a test may call itself otherwise).
 */
export function observeStatements(name: string, datasource: Datasource, observer: StatementObserver): DatasourceRuntime {
  return runtimeOver(datasource).observedBy(name, observer);
}
