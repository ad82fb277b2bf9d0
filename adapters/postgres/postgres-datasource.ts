import {
  isConnectionFailure, isDeadlineExceeded, PING_TIMEOUT_MS, readCatalog, KnexDatasource, encodeResult, type Catalog, type CursorOptions, type DatasourceCursor,
  type ExecutionScope, type PingOptions, type QueryOptions, type QueryResult, type RowReader,
  type SqlDialect, type SqlExecutor, type TransactionOptions, type WireForwardOptions, type WireForwardOutcome, type WireStatement,
} from '../../core/plugin-api/adapter-kit.js';
import type { Knex } from 'knex';
import { forgetPrepared, type PgResult } from './pg-statement.js';
import { openPostgresCursor } from './postgres-cursor.js';
import { postgresIntrospectionQueries } from './postgres-introspector.js';
import { streamStatement, type StreamingClient } from './postgres-stream.js';
import { postgresCodec, postgresWithTimeZone } from './postgres-types.js';
import { destroySocket, type ConnectionSource, type ScopePool, type SessionSetup } from './scope-pool.js';
import { forwardStatement, type ForwardingClient } from './postgres-wire-forward.js';
import { PreparedStatements } from './prepared-statements.js';

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

/** How a datasource opens the connections of a caller scope, each set once to it (role, read-only, time limit). */
export interface ScopeOpeners {
  /** For single statements: the hot path of every endpoint. */
  statements(setup: SessionSetup): ScopePool;
  /** For the scope's transactions (actions), opened on the first one. */
  transactions(setup: SessionSetup): Knex;
}

/**
 * A PostgreSQL datasource over knex's pg pool (PGlite reuses its introspection and type mapping).
 *
 * A caller's statement (`QueryOptions.scope`, docs/governed-execution.md) runs on a pool of connections set
 * once to that scope (role, read-only, time limit): the statement costs no more round trips than the login's.
 * Without `openScope` it runs in a transaction of its own set to the scope.
 */
export class PostgresDatasource extends KnexDatasource {
  /** The pools of the scopes in use, by role, read-only mode and time limit. */
  private readonly scoped = new Map<string, { setup: SessionSetup; statements?: ScopePool; cursors?: ScopePool; transactions?: Knex }>();
  /** The same by scope object and time limit: the core reuses its scope objects, a request builds no key. */
  private readonly scopedByObject = new WeakMap<ExecutionScope, Map<number | undefined, { setup: SessionSetup; statements?: ScopePool; cursors?: ScopePool; transactions?: Knex }>>();
  /** The login's own pool, for the service's statements. */
  private readonly loginConnections: ConnectionSource;
  /**
   * `$n` texts by `?` text, and the SQL door's forwarded texts: endpoint queries repeat their text, so each
   * is rewritten once, and prepared once per connection under a name derived from it (the server then
   * skips parsing and planning).
   */
  private readonly prepared = new PreparedStatements('vdb_');

  /** Offered with the pools of scopes: a forwarded statement runs on a connection already set to its scope. */
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;
  /** Offered with the pools of scopes: a cursor's connection is set to its scope as a statement's is. */
  readonly openCursor?: (sql: string, bindings: readonly unknown[], options: CursorOptions) => Promise<DatasourceCursor>;

  constructor(name: string, dialect: SqlDialect, knex: Knex, private readonly openScope?: ScopeOpeners) {
    super(name, dialect, knex);
    const client = knex.client as unknown as KnexPgClient;
    this.loginConnections = {
      acquire: () => client.acquireConnection(),
      release: (connection, broken) => {
        if (broken) this.abandonConnection(connection, broken);
        void client.releaseConnection(connection);
      },
    };
    if (openScope) {
      this.forwardWire = (statement, options) => this.forward(openScope, statement, options);
      this.openCursor = (sql, bindings, options) => {
        // a pool of their own: open cursors hold their connections, and must not starve the scope's statements
        const entry = options.scope === undefined ? undefined : this.scopeEntry(options.scope, options.timeoutMs);
        const connections = entry === undefined ? this.loginConnections : (entry.cursors ??= openScope.statements(entry.setup));
        return openPostgresCursor(connections, client.positionBindings(sql), bindings, options);
      };
    }
  }

  /** The connection is held from the statement's first message to its ReadyForQuery, no longer. */
  private async forward(open: ScopeOpeners, statement: WireStatement, options: WireForwardOptions): Promise<WireForwardOutcome> {
    const connections = options.scope === undefined ? this.loginConnections : this.statementPool(open, options.scope, options.timeoutMs);
    const connection = await connections.acquire();
    let broken: Error | undefined;
    try {
      return await forwardStatement(connection as unknown as ForwardingClient, statement, options, this.prepared);
    } catch (error) {
      broken = brokenBy(error);
      throw error;
    } finally {
      connections.release(connection, broken ?? this.retired(connection));
    }
  }

  override query(sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const { scope } = options;
    if (scope === undefined) return this.execute(this.knex, sql, bindings, options);
    const open = this.openScope;
    if (open) return this.pooledQuery(sql, bindings, this.statementPool(open, scope, options.timeoutMs), options);
    const { maxRows, maxBytes } = options;
    return this.transaction((transaction) => transaction.query(sql, bindings, { maxRows, maxBytes }), { scope, timeoutMs: options.timeoutMs, deadline: options.deadline });
  }

  override transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const { scope, timeoutMs, deadline } = options;
    if (scope === undefined) return super.transaction(work);
    const open = this.openScope;
    if (open) {
      const entry = this.scopeEntry(scope, timeoutMs);
      entry.transactions ??= open.transactions(entry.setup);
      return this.transactionWithin(entry.transactions, deadline, (trx) => work(this.executorOf(trx)));
    }
    return this.transactionWithin(this.knex, deadline, async (trx) => {
      await runRaw(trx, TRANSACTION_SCOPE_SQL, [scope.role, timeoutMs === undefined ? null : String(timeoutMs)]);
      return work(this.executorOf(trx));
    }, { readOnly: scope.readOnly });
  }

  protected override abandonConnection(connection: unknown, error: Error): void {
    (connection as { __knex__disposed?: unknown }).__knex__disposed = error;
    destroySocket(connection as StreamingClient);
  }

  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    if (runner.isTransaction !== true) return this.pooledQuery(sql, bindings, this.loginConnections, options);
    const result = await runRaw(runner, sql, bindings);
    const columns = result.fields.map((field) => ({ name: field.name, ...postgresCodec(field.dataTypeID) }));
    return encodeResult(columns, result.rows, { maxRows: options.maxRows, maxBytes: options.maxBytes, affectedRows: result.rowCount ?? 0 });
  }

  private statementPool(open: ScopeOpeners, scope: ExecutionScope, timeoutMs: number | undefined): ScopePool {
    const entry = this.scopeEntry(scope, timeoutMs);
    return (entry.statements ??= open.statements(entry.setup));
  }

  /** Opened on first use; closed with the datasource (an idle connection leaves its pool after its idle timeout). */
  private scopeEntry(scope: ExecutionScope, timeoutMs: number | undefined) {
    let byLimit = this.scopedByObject.get(scope);
    if (!byLimit) this.scopedByObject.set(scope, (byLimit = new Map()));
    let entry = byLimit.get(timeoutMs);
    if (!entry) {
      const key = `${scope.role}\u0000${scope.readOnly}\u0000${timeoutMs ?? ''}`;
      entry = this.scoped.get(key);
      if (!entry) this.scoped.set(key, (entry = { setup: sessionSetup(scope, timeoutMs) }));
      byLimit.set(timeoutMs, entry);
    }
    return entry;
  }

  protected override async release(): Promise<void> {
    await Promise.allSettled([...this.scoped.values()].flatMap((entry) => [entry.statements?.close(), entry.cursors?.close(), entry.transactions?.destroy()]));
    await super.release();
  }

  /**
   * A statement outside a transaction, on a pooled pg connection directly: knex.raw's query pipeline costs
   * about as much as a simple indexed query (bench/README.md). Its rows are read as they arrive, within the
   * limits of `options`, and the statement is cancelled on the server once cut or aborted
   * (postgres-stream.ts). Transactions keep going through knex.
   */
  protected async pooledQuery(sql: string, bindings: readonly unknown[], connections: ConnectionSource, options: QueryOptions): Promise<QueryResult> {
    // only a statement with values is prepared (a text without them may hold several statements), and not one planned per run
    const native = options.planEachRun === true ? this.prepared.unnamed(sql, this.positionBindings) : this.prepared.of(sql, bindings.length > 0, this.positionBindings);
    const { name } = native;
    const connection = await connections.acquire();
    let broken: Error | undefined;
    try {
      const values = [...bindings];
      if (name === undefined) return await streamStatement(connection, { text: native.text, values }, options);
      const parsed = this.prepared.parsedOn(connection);
      try {
        const result = await streamStatement(connection, { text: native.text, name, values }, options);
        parsed.add(name);
        return result;
      } catch (error) {
        const { code } = error as { code?: unknown };
        if (code !== '0A000' && code !== '26000') throw error;
        if (code === '26000') {
          // the server lost the statement before it ran (deallocated behind the service's back): parse it again
          forgetPrepared(connection, name);
          parsed.delete(name);
          const result = await streamStatement(connection, { text: native.text, name, values }, options);
          parsed.add(name);
          return result;
        }
        // DDL changed what a prepared statement returns: this connection's plan is stale, run it unnamed
        this.prepared.unname(sql, native);
        return await streamStatement(connection, { text: native.text, values }, options);
      }
    } catch (error) {
      broken = brokenBy(error);
      throw error;
    } finally {
      connections.release(connection, broken ?? this.retired(connection));
    }
  }

  /** `?` placeholders as pg's `$n`, by knex's pg client. */
  private readonly positionBindings = (sql: string): string => (this.knex.client as unknown as KnexPgClient).positionBindings(sql);

  /** A connection that holds its share of prepared statements is closed rather than reused (prepared-statements.ts). */
  private retired(connection: object): Error | undefined {
    return this.prepared.full(connection) ? new Error('the connection holds its share of prepared statements') : undefined;
  }

  /** On the login's pool with a deadline: a server that stopped answering fails the ping and frees its connection. */
  override async ping(options: PingOptions = {}): Promise<void> {
    await this.pooledQuery('select 1', [], this.loginConnections, { timeoutMs: PING_TIMEOUT_MS, deadline: options.deadline });
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    const read: RowReader = async ({ sql, bindings }) => (await runRaw(this.knex, sql, bindings)).rows;
    return readCatalog(schemas, postgresIntrospectionQueries(schemas), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: postgresWithTimeZone,
    });
  }
}

/**
 * The error that leaves a connection unusable: the server ended it (pg_terminate_backend, a restart: 57P01,
 * a lost socket) or the statement outlived its deadline on a server that no longer answers. Such a
 * connection is destroyed, never handed to the next statement.
 */
function brokenBy(error: unknown): Error | undefined {
  return isConnectionFailure(error) || isDeadlineExceeded(error) ? error as Error : undefined;
}
