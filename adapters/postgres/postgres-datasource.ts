import { createHash } from 'node:crypto';
import {
  LruCache, readCatalog, KnexDatasource, encodeResult, type Catalog, type ExecutionScope, type QueryOptions, type QueryResult, type RowReader,
  type SqlDialect, type SqlExecutor, type TransactionOptions, type WireForwardOptions, type WireForwardOutcome, type WireStatement,
} from '../../core/plugin-api/index.js';
import type { Knex } from 'knex';
import type { PgResult } from './pg-statement.js';
import { postgresIntrospectionQueries } from './postgres-introspector.js';
import { streamStatement, type StreamingClient } from './postgres-stream.js';
import { postgresCodec, postgresWithTimeZone } from './postgres-types.js';
import { forwardStatement, type ForwardingClient } from './postgres-wire-forward.js';

/** knex.raw on pg returns one result, or one per statement when the text holds several. */
async function runRaw(knex: Knex, sql: string, bindings: readonly unknown[]): Promise<PgResult> {
  const raw = (await knex.raw(sql, bindings as Knex.RawBinding[])) as PgResult | PgResult[];
  const last = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  return last ?? { rows: [], fields: [], rowCount: 0 };
}

/** What the datasource uses of knex's pg client: its pool and its `?` → `$n` rewriting. */
interface KnexPgClient {
  acquireConnection(): Promise<StreamingClient>;
  releaseConnection(connection: unknown): Promise<void>;
  positionBindings(sql: string): string;
}

/**
 * `$n` texts by `?` text: endpoint queries repeat their text, so each is rewritten once, and prepared once
 * per connection under a name derived from it (the server then skips parsing and planning).
 */
const nativeTexts = new LruCache<string, { text: string; name: string | undefined }>(1_000);
/**
 * The server keeps a prepared statement for the life of the connection: at most this many distinct texts
 * are prepared (a caller looping over lists of every length must not fill the server's memory); later
 * texts run unnamed.
 */
const MAX_PREPARED_TEXTS = 500;
let preparedTexts = 0;
const MAX_CACHED_TEXT = 16_384;

/** The statement that sets a new session to a scope; its values are bound, it names no identifier. */
export interface SessionSetup {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * `SET ROLE`, `SET default_transaction_read_only`, `SET statement_timeout` for the life of a pooled
 * connection, as one statement with bound values. Without a time limit the login's own stays.
 */
function sessionSetup(scope: ExecutionScope, timeoutMs: number | undefined): SessionSetup {
  return {
    sql: `select pg_catalog.set_config('role', $1, false), pg_catalog.set_config('default_transaction_read_only', $2, false),
  pg_catalog.set_config('statement_timeout', coalesce($3, pg_catalog.current_setting('statement_timeout')), false)`,
    bindings: [scope.role, scope.readOnly ? 'on' : 'off', timeoutMs === undefined ? null : String(timeoutMs)],
  };
}

/** `SET LOCAL ROLE` and `SET LOCAL statement_timeout` for one transaction, which knex begins read-only where asked. */
const TRANSACTION_SCOPE_SQL = `select pg_catalog.set_config('role', ?, true),
  pg_catalog.set_config('statement_timeout', coalesce(?, pg_catalog.current_setting('statement_timeout')), true)`;

/**
 * A PostgreSQL datasource over knex's pg pool (PGlite reuses its introspection and type mapping).
 *
 * A caller's statement (`QueryOptions.scope`, docs/governed-execution.md) runs on a pool of connections set
 * once to that scope (role, read-only, time limit): the statement costs no more round trips than the login's.
 * Without `openPinned` it runs in a transaction of its own set to the scope.
 */
export class PostgresDatasource extends KnexDatasource {
  /** The pools of the scopes in use, by role, read-only mode and time limit. */
  private readonly pinned = new Map<string, Knex>();
  /** The same pools by scope object and time limit: the core reuses its scope objects, a request builds no key. */
  private readonly pinnedByScope = new WeakMap<ExecutionScope, Map<number | undefined, Knex>>();

  /** Offered with the pools of scopes: a forwarded statement runs on a connection already set to its scope. */
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;

  constructor(name: string, dialect: SqlDialect, knex: Knex, private readonly openPinned?: (setup: SessionSetup) => Knex) {
    super(name, dialect, knex);
    if (openPinned) this.forwardWire = (statement, options) => this.forward(openPinned, statement, options);
  }

  /** The connection is held from the statement's first message to its ReadyForQuery, no longer. */
  private async forward(
    open: (setup: SessionSetup) => Knex, statement: WireStatement, options: WireForwardOptions,
  ): Promise<WireForwardOutcome> {
    const pool = options.scope === undefined ? this.knex : this.pinnedPool(open, options.scope, options.timeoutMs);
    const client = pool.client as unknown as KnexPgClient;
    const connection = await client.acquireConnection();
    try {
      return await forwardStatement(connection as unknown as ForwardingClient, statement, options);
    } finally {
      await client.releaseConnection(connection);
    }
  }

  override query(sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const { scope } = options;
    if (scope === undefined) return this.execute(this.knex, sql, bindings, options);
    if (this.openPinned) return this.execute(this.pinnedPool(this.openPinned, scope, options.timeoutMs), sql, bindings, options);
    const { maxRows, maxBytes } = options;
    return this.transaction((transaction) => transaction.query(sql, bindings, { maxRows, maxBytes }), { scope, timeoutMs: options.timeoutMs });
  }

  override transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const { scope, timeoutMs } = options;
    if (scope === undefined) return super.transaction(work);
    if (this.openPinned) return this.pinnedPool(this.openPinned, scope, timeoutMs).transaction((trx) => work(this.executorOf(trx)));
    return this.knex.transaction(async (trx) => {
      await runRaw(trx, TRANSACTION_SCOPE_SQL, [scope.role, timeoutMs === undefined ? null : String(timeoutMs)]);
      return work(this.executorOf(trx));
    }, { readOnly: scope.readOnly });
  }

  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    if (runner.isTransaction !== true) return this.pooledQuery(sql, bindings, runner, options);
    const result = await runRaw(runner, sql, bindings);
    const columns = result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, maxBytes: options.maxBytes, affectedRows: result.rowCount ?? 0 });
  }

  /** Opened on first use; closed with the datasource (an idle connection leaves the pool after its idle timeout). */
  private pinnedPool(open: (setup: SessionSetup) => Knex, scope: ExecutionScope, timeoutMs: number | undefined): Knex {
    let byLimit = this.pinnedByScope.get(scope);
    if (!byLimit) this.pinnedByScope.set(scope, (byLimit = new Map()));
    let pool = byLimit.get(timeoutMs);
    if (!pool) {
      const key = `${scope.role}\u0000${scope.readOnly}\u0000${timeoutMs ?? ''}`;
      pool = this.pinned.get(key);
      if (!pool) this.pinned.set(key, (pool = open(sessionSetup(scope, timeoutMs))));
      byLimit.set(timeoutMs, pool);
    }
    return pool;
  }

  protected override async release(): Promise<void> {
    await Promise.allSettled([...this.pinned.values()].map((pool) => pool.destroy()));
    await super.release();
  }

  /**
   * A statement outside a transaction, on a pooled pg connection directly: knex.raw's query pipeline costs
   * about as much as a simple indexed query (bench/README.md). Its rows are read as they arrive, within the
   * limits of `options`, and the statement is cancelled on the server once cut or aborted
   * (postgres-stream.ts). Transactions keep going through knex.
   */
  protected async pooledQuery(sql: string, bindings: readonly unknown[], pool: Knex = this.knex, options: QueryOptions = {}): Promise<QueryResult> {
    const client = pool.client as unknown as KnexPgClient;
    let native = nativeTexts.get(sql);
    if (native === undefined) {
      const text = client.positionBindings(sql);
      // only a statement with values is prepared: a text without them may hold several statements
      const prepared = bindings.length > 0 && sql.length <= MAX_CACHED_TEXT && preparedTexts < MAX_PREPARED_TEXTS;
      native = { text, name: prepared ? `vdb_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}` : undefined };
      if (prepared) preparedTexts += 1;
      if (sql.length <= MAX_CACHED_TEXT) nativeTexts.set(sql, native);
    }
    const connection = await client.acquireConnection();
    try {
      const values = [...bindings];
      try {
        return await streamStatement(connection, native.name === undefined ? { text: native.text, values } : { text: native.text, name: native.name, values }, options);
      } catch (error) {
        // DDL changed what a prepared statement returns: this connection's plan is stale, run it unnamed
        if (native.name === undefined || (error as { code?: unknown }).code !== '0A000') throw error;
        nativeTexts.set(sql, { text: native.text, name: undefined });
        return await streamStatement(connection, { text: native.text, values }, options);
      }
    } finally {
      await client.releaseConnection(connection);
    }
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runRaw(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, postgresIntrospectionQueries(schemas), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: postgresWithTimeZone,
    });
  }
}
