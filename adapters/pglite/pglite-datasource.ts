import type { Knex } from 'knex';
import {
  buildTableStatement, encodeResult, knexPoolUsage, LruCache, readCatalog,
  type BuiltStatement, type Catalog, type Datasource, type ExecutionScope, type PoolUsage, type QueryOptions, type QueryResult, type RowReader,
  type SqlDialect, type SqlExecutor, type TableStatement, type TransactionOptions,
} from '../../core/plugin-api/adapter-kit.js';
import { postgresIntrospectionQueries } from '../postgres/postgres-introspector.js';
import { postgresCodec, postgresWithTimeZone } from '../postgres/postgres-types.js';
import type { PgliteHost, StatementOptions, TransactionTicket } from './pglite-host.js';
import type { PgliteRows } from './pglite-messages.js';
import { AUTHENTICATOR, grantAuthenticator } from './pglite-session.js';

/**
 * A PostgreSQL datasource over one embedded PGlite instance in a worker thread (pglite-host.ts): every
 * statement is bounded by its time limit, and the event loop stays free while it runs. Statements take
 * knex's `?` bindings, numbered by the knex instance; values and types map as for PostgreSQL.
 *
 * A caller's statement (`QueryOptions.scope`, docs/governed-execution.md) runs on the session set to the
 * caller's role and read-only mode, which the worker sets before every such statement, in the same protocol
 * exchange (pglite-exchange.ts); a transaction with a scope begins as the login and sets its role for itself.
 */
export class PgliteDatasource implements Datasource {
  private closing: Promise<void> | undefined;
  /** The `$n` text of each `?` text whose bindings knex passes through as they are (scalars), and how many it takes. */
  private readonly numberedTexts = new LruCache<string, { sql: string; count: number }>(500);

  constructor(readonly name: string, readonly dialect: SqlDialect, private readonly knex: Knex, private readonly host: PgliteHost) {}

  buildStatement(statement: TableStatement): BuiltStatement {
    return buildTableStatement(this.knex, statement);
  }

  poolUsage(): PoolUsage | undefined {
    return knexPoolUsage(this.knex);
  }

  query(sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const { scope, ...statement } = options;
    return this.execute(sql, bindings, scope === undefined ? statement : { ...statement, scope });
  }

  /**
   * BEGIN and COMMIT on the single session. A statement of `work` over its limit ends the worker, and the
   * transaction with it: its later statements and its COMMIT fail with 25P02.
   */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    return this.run(work, options);
  }

  private async run<T>(work: (transaction: SqlExecutor) => Promise<T>, options: TransactionOptions): Promise<T> {
    // the transaction takes its turns in its caller's lane (pglite-host.ts)
    const transaction = await this.host.begin({ lane: options.scope?.role });
    try {
      let result: T;
      try {
        if (options.scope) await this.enterScope(options.scope, transaction);
        result = await work({
          query: (sql, bindings, statement = {}) => this.execute(sql, bindings, { timeoutMs: options.timeoutMs, ...statement, transaction }),
        });
      } catch (error) {
        await this.host.query('rollback', [], { transaction }).catch(() => undefined);
        throw error;
      }
      await this.host.query('commit', [], { transaction });
      return result;
    } finally {
      this.host.end(transaction);
    }
  }

  /**
   * `SET LOCAL ROLE` and the read-only mode in one statement with bound values. Read-only may be set after
   * this first query of the transaction; only read-write could not.
   */
  private async enterScope(scope: ExecutionScope, transaction: TransactionTicket): Promise<void> {
    await this.host.query(
      "select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('transaction_read_only', $2, true)",
      [scope.role, scope.readOnly ? 'on' : 'off'],
      { transaction },
    );
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await this.host.query(...this.numbered(sql, bindings))).rows;
    return readCatalog(schemas, postgresIntrospectionQueries(schemas), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: postgresWithTimeZone,
    });
  }

  async ping(): Promise<void> {
    await this.host.query('select 1', []);
  }

  /**
   * Reopens the session as AUTHENTICATOR (pglite-session.ts), a member of `memberOf` and nothing else, for
   * good: the reopen after a statement over its limit opens it so too. The role changes need the superuser
   * session, so a session restricted before is reopened as the superuser first, and restricted again as it
   * was when the changes fail.
   */
  restrictSession(memberOf: readonly string[]): Promise<void> {
    const quote = (name: string) => this.dialect.quoteIdentifier(name);
    return this.host.restrict(AUTHENTICATOR, (query) => grantAuthenticator({
      query: async (sql, bindings) => this.encoded(await query(...this.numbered(sql, bindings)), {}),
    }, memberOf, quote));
  }

  /** Ends the worker thread and frees its database; the process may exit once every datasource is closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      try {
        await this.knex.destroy();
      } finally {
        await this.host.close();
      }
    })();
    return this.closing;
  }

  private async execute(sql: string, bindings: readonly unknown[], options: StatementOptions): Promise<QueryResult> {
    return this.encoded(await this.host.query(...this.numbered(sql, bindings), options), options);
  }

  private encoded(result: PgliteRows, limits: { maxRows?: number | undefined; maxBytes?: number | undefined }): QueryResult {
    const columns = result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) }));
    return encodeResult(columns, result.rows, { maxRows: limits.maxRows, maxBytes: limits.maxBytes, affectedRows: result.affectedRows });
  }

  /**
   * `?` → `$n` and the values as knex's pg client prepares them. Scalars knex passes through unchanged, so
   * their text is kept per `?` text rather than rebuilt by knex on every statement; not a text with `??`,
   * which knex fills with an identifier from the value.
   */
  private numbered(sql: string, bindings: readonly unknown[]): [string, unknown[]] {
    const scalars = bindings.every(isScalar) && !sql.includes('??');
    const known = scalars ? this.numberedTexts.get(sql) : undefined;
    if (known !== undefined && known.count === bindings.length) return [known.sql, [...bindings]];
    const native = this.knex.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
    if (scalars) this.numberedTexts.set(sql, { sql: native.sql, count: bindings.length });
    return [native.sql, [...native.bindings]];
  }
}

/** A value knex binds as it is: no identifier, raw fragment or builder to expand, and never undefined (which knex refuses). */
function isScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint';
}
