import type { Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import { ServiceError, UnavailableError } from '../plugin-api/errors.js';
import type {
  Datasource, DatasourceCursor, LoginHoldings, QueryOptions, QueryResult, RoleLogin, SqlDialect, SqlExecutor, TransactionOptions, WireForwardOptions, WireForwardOutcome,
  WireStatement,
} from '../plugin-api/sql-dialect.js';
import { statementFailure, unavailableError } from './statement-failure.js';

export interface GuardOptions {
  /** Serialize every call; default: the dialect's `capabilities.singleConnection`. */
  singleConnection?: boolean;
}

/**
 * The runtime guard the core wraps every adapter's datasource in (Kysely's RuntimeDriver): it closes once,
 * serializes calls where the dialect has a single connection (PGlite), refuses calls after close, and
 * classifies every failure once (`seamError`). Guarding a guarded datasource returns it unchanged.
 */
export function guardDatasource(datasource: Datasource, options: GuardOptions = {}): Datasource {
  if (datasource instanceof GuardedDatasource) return datasource;
  return new GuardedDatasource(datasource, options.singleConnection ?? datasource.dialect.capabilities.singleConnection);
}

/** Runs one call at a time, in order; a failed call does not block the next. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

class GuardedDatasource implements Datasource {
  private readonly mutex: Mutex | undefined;
  private closing: Promise<void> | undefined;

  readonly restrictSession?: (memberOf: readonly string[]) => Promise<void>;
  readonly useRoleLogins?: (logins: readonly RoleLogin[]) => Promise<LoginHoldings[]>;
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;
  readonly openCursor?: (sql: string, bindings: readonly unknown[], options: QueryOptions) => Promise<DatasourceCursor>;

  constructor(private readonly inner: Datasource, singleConnection: boolean) {
    this.mutex = singleConnection ? new Mutex() : undefined;
    const restrict = inner.restrictSession?.bind(inner);
    if (restrict) this.restrictSession = (memberOf) => this.run(() => restrict(memberOf));
    const useLogins = inner.useRoleLogins?.bind(inner);
    if (useLogins) this.useRoleLogins = (logins) => this.run(() => useLogins(logins));
    const forward = inner.forwardWire?.bind(inner);
    if (forward) this.forwardWire = (statement, options) => this.run(() => forward(statement, options));
    const openCursor = inner.openCursor?.bind(inner);
    if (openCursor) this.openCursor = (sql, bindings, options) => this.run(() => openCursor(sql, bindings, options));
  }

  get name(): string { return this.inner.name; }
  get dialect(): SqlDialect { return this.inner.dialect; }
  get knex(): Knex { return this.inner.knex; }

  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    return this.run(() => this.inner.query(sql, bindings, options));
  }

  /** Statements inside `work` use the transaction's connection, so they are not queued behind it. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.run(() => this.inner.transaction(work, options));
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    return this.run(() => this.inner.introspect(schemas));
  }

  ping(): Promise<void> {
    return this.run(() => this.inner.ping());
  }

  close(): Promise<void> {
    // After the calls already queued, so a single connection is not pulled from under a running query.
    this.closing ??= this.mutex ? this.mutex.run(() => this.inner.close()) : this.inner.close();
    return this.closing;
  }

  private async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.closing) throw new UnavailableError('datasource_unavailable', `datasource "${this.name}" is closed`);
    try {
      return await (this.mutex ? this.mutex.run(call) : call());
    } catch (error) {
      throw seamError(this.name, error);
    }
  }
}

/**
 * A failure as it leaves the guard: the service's own errors as they are, an unreachable datasource as
 * `UnavailableError('datasource_unavailable')`, any driver error as the StatementFailure it classifies to.
 */
export function seamError(datasource: string, error: unknown): unknown {
  if (error instanceof ServiceError) return error;
  const failure = statementFailure(error);
  return failure.kind === 'unavailable' ? unavailableError(datasource, error) : failure;
}
