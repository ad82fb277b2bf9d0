import knex, { type Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import type { Datasource, PoolSettings, QueryOptions, QueryResult, SqlDialect, SqlExecutor, TransactionOptions } from '../plugin-api/sql-dialect.js';
import { unavailableError } from './statement-failure.js';
import { armDeadline } from './statement-deadline.js';

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
 * What every knex-backed datasource shares: the knex instance, ping, a close that runs once, and the check
 * at open that the server answers, and transactions. Dialects supply `execute` and `introspect`.
 */
export abstract class KnexDatasource implements Datasource {
  private closing: Promise<void> | undefined;

  constructor(
    readonly name: string,
    readonly dialect: SqlDialect,
    readonly knex: Knex,
    /** The trivial statement of `ping`, e.g. `select 1 from dual` on Oracle. */
    private readonly pingSql = 'select 1',
  ) {}

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

  /**
   * The statements of one open transaction; a statement's own `scope` is the transaction's. `progress` is
   * told as each statement starts and ends (`transactionWithin` re-arms its deadline).
   */
  protected executorOf(trx: Knex.Transaction, progress?: () => void): SqlExecutor {
    if (progress === undefined) return { query: (sql, bindings, options) => this.execute(trx, sql, bindings, options) };
    return {
      query: (sql, bindings, options) => {
        progress();
        return this.execute(trx, sql, bindings, options).finally(progress);
      },
    };
  }

  /**
   * A transaction on `runner` with a client-side deadline of `timeoutMs` plus slack, re-armed as each of its
   * statements starts and ends, so that BEGIN, every statement and COMMIT are covered, where the dialect can
   * destroy a connection (`abandonConnection`): a server that stopped answering enforces no time limit, so
   * past the deadline the transaction's connection is destroyed, which ends the statement waiting on it and
   * the rollback at once, and the transaction fails with 57014.
   */
  protected async transactionWithin<T>(runner: Knex, timeoutMs: number | undefined, work: (trx: Knex.Transaction, progress?: () => void) => Promise<T>, config: Knex.TransactionConfig = {}): Promise<T> {
    const abandon = this.abandonConnection?.bind(this);
    if (timeoutMs === undefined || abandon === undefined) return runner.transaction((trx) => work(trx), config);
    // the connection is acquired here, so that it can be destroyed even while BEGIN waits on it
    const client = runner.client as { acquireConnection(): Promise<unknown>; releaseConnection(connection: unknown): Promise<unknown> };
    const connection = await client.acquireConnection();
    let expired: Error | undefined;
    let disarm = () => undefined as void;
    const progress = () => {
      disarm();
      disarm = armDeadline(timeoutMs, (error) => {
        expired = error;
        abandon(connection, error);
      });
    };
    progress();
    try {
      return await runner.transaction((trx) => work(trx, progress), { ...config, connection });
    } catch (error) {
      throw expired ?? error;
    } finally {
      disarm();
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

  async ping(): Promise<void> {
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
    try {
      await this.ping();
      return this;
    } catch (error) {
      await this.close().catch(() => undefined);
      throw unavailableError(this.name, error);
    }
  }
}
