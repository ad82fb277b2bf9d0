import knex, { type Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import type {
  BuiltStatement, Datasource, Deadline, PingOptions, PoolSettings, PoolUsage, QueryOptions, QueryResult, SqlDialect, SqlExecutor, TableStatement, TransactionOptions,
} from '../plugin-api/sql-dialect.js';
import { buildTableStatement, knexPoolUsage } from './knex-table-statements.js';
import { unavailableError } from './statement-failure.js';
import { onDeadline, PING_TIMEOUT_MS, StatementDeadline } from './statement-deadline.js';

/** One SQL text with its positional `?` bindings, as introspection queries are written. */
export interface BoundSql {
  sql: string;
  bindings: readonly string[];
}

/** Runs a BoundSql and returns its rows as objects keyed by column alias. */
export type RowReader = (query: BoundSql) => Promise<Record<string, unknown>[]>;

/** `?, ?, ?` for a list of values bound one placeholder each (schema names are never spliced into SQL). */
export function placeholders(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}

/** Default wait for a connection: a datasource that does not answer fails in bounded time. */
export const DEFAULT_ACQUIRE_TIMEOUT_MS = 10_000;

/**
 * Creates a knex instance with the settings every datasource needs: bound values stay out of error
 * messages (they may hold anything a caller sent), and knex's console logger is silenced: what it warns
 * about (a failed connection attempt, with the driver's text) reaches the caller as an error anyway.
 */
export function createKnex(config: Knex.Config): Knex {
  const quiet = () => undefined;
  return knex({ ...config, compileSqlOnError: false, log: { warn: quiet, error: quiet, deprecate: quiet, debug: quiet } });
}

/** knex pool settings from `datasources.<name>.pool`. */
export function knexPool(pool: PoolSettings): Knex.PoolConfig {
  return {
    min: pool.min ?? 0,
    max: pool.max ?? 10,
    acquireTimeoutMillis: pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
    ...(pool.idleTimeoutMs === undefined ? {} : { idleTimeoutMillis: pool.idleTimeoutMs }),
  };
}

/**
 * What every knex-backed datasource shares: the knex instance (its query builder builds `buildStatement`,
 * its pool answers `poolUsage`), ping, a close that runs once, the check at open that the server answers,
 * and transactions. Dialects supply `execute` and `introspect`. Knex stays inside: the contract
 * (`Datasource`) names none of its types.
 */
export abstract class KnexDatasource implements Datasource {
  private closing: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly dialect: SqlDialect,
    protected readonly knex: Knex,
    /** The trivial statement of `ping`, e.g. `select 1 from dual` on Oracle. */
    private readonly pingSql = 'select 1',
  ) {}

  buildStatement(statement: TableStatement): BuiltStatement {
    return buildTableStatement(this.knex, statement);
  }

  poolUsage(): PoolUsage | undefined {
    return knexPoolUsage(this.knex);
  }

  /** Dialects whose database enforces the data roles override it to honour `options.scope`. */
  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    if (options?.scope) return Promise.reject(this.scopeRefused());
    return this.execute(this.knex, sql, bindings, options);
  }

  /** Overridden with `query`, for `options.scope`. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    if (options?.scope) return Promise.reject(this.scopeRefused());
    return this.knex.transaction((trx) => work(this.executorOf(trx)));
  }

  /** The statements of one open transaction; a statement's own `scope` is the transaction's. */
  protected executorOf(trx: Knex.Transaction): SqlExecutor {
    return { query: (sql, bindings, options) => this.execute(trx, sql, bindings, options) };
  }

  /**
   * A transaction on `runner` that ends at `deadline` (`TransactionOptions.deadline`, armed and re-armed by
   * the runtime) where the dialect can destroy a connection (`abandonConnection`): a server that stopped
   * answering enforces no time limit, so once the deadline aborts, the transaction's connection is
   * destroyed, which ends the statement waiting on it and the rollback at once, and the transaction fails
   * with the deadline's 57014.
   */
  protected async transactionWithin<T>(runner: Knex, deadline: Deadline | undefined, work: (trx: Knex.Transaction) => Promise<T>, config: Knex.TransactionConfig = {}): Promise<T> {
    const abandon = this.abandonConnection?.bind(this);
    if (deadline === undefined || abandon === undefined) return runner.transaction((trx) => work(trx), config);
    // the connection is acquired here, so that it can be destroyed even while BEGIN waits on it
    const client = runner.client as { acquireConnection(): Promise<unknown>; releaseConnection(connection: unknown): Promise<unknown> };
    const connection = await client.acquireConnection();
    let expired: Error | undefined;
    const stop = onDeadline(deadline, (error) => {
      expired = error;
      abandon(connection, error);
    });
    try {
      return await runner.transaction((trx) => work(trx), { ...config, connection });
    } catch (error) {
      throw expired ?? error;
    } finally {
      stop();
      await client.releaseConnection(connection);
    }
  }

  /**
   * Closes a driver connection without the protocol's goodbye (a server that stopped answering never sends
   * its half) and marks it so that knex's pool destroys it rather than handing it out again.
   */
  protected abandonConnection?(connection: unknown, error: Error): void;

  /** A scope never runs as the login: the core asks for one only where `capabilities.enforcesRoles`. */
  private scopeRefused(): Error {
    return new Error(`datasource ${this.name}: dialect ${this.dialect.id} cannot run a statement under a database role`);
  }

  /** Runs one statement on `runner`: the knex instance, or a transaction of it. */
  protected abstract execute(runner: Knex, sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult>;
  abstract introspect(schemas: readonly string[]): Promise<Catalog>;

  /** Where the dialect can destroy a connection, it overrides this to honour `options.deadline`. */
  async ping(_options?: PingOptions): Promise<void> {
    await this.knex.raw(this.pingSql);
  }

  close(): Promise<void> {
    this.closing ??= this.release();
    return this.closing;
  }

  /** Frees what the datasource holds; runs once. */
  protected async release(): Promise<void> {
    await this.knex.destroy();
  }

  /**
   * Pings once, so that `open` fails fast: an unreachable server closes the pool and rejects with
   * `UnavailableError('datasource_unavailable')` naming the datasource (never its password).
   */
  async verified(): Promise<this> {
    // no runtime holds the datasource yet: the check bounds its own ping as the runtime does
    const deadline = new StatementDeadline(PING_TIMEOUT_MS);
    try {
      await this.ping({ deadline });
      return this;
    } catch (error) {
      await this.close().catch(() => undefined);
      throw unavailableError(this.name, error);
    } finally {
      deadline.disarm();
    }
  }
}
