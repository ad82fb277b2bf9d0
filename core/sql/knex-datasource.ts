import knex, { type Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import type { Datasource, PoolSettings, QueryOptions, QueryResult, SqlDialect, SqlExecutor, TransactionOptions } from '../plugin-api/sql-dialect.js';
import { unavailableError } from './guarded-datasource.js';

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

  /** The statements of one open transaction; a statement's own `scope` is the transaction's. */
  protected executorOf(trx: Knex.Transaction): SqlExecutor {
    return { query: (sql, bindings, options) => this.execute(trx, sql, bindings, options) };
  }

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
