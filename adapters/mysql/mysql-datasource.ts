import type { Knex } from 'knex';
import {
  deny, denialError, isConnectionFailure, isDeadlineExceeded, messageOf, PING_TIMEOUT_MS, type JsonValue, readCatalog, KnexDatasource, encodeResult, type Catalog, type ExecutionScope, type QueryOptions, type QueryResult,
  type LoginHoldings, type PingOptions, type RoleLogin, type RowReader, type SqlDialect, type SqlExecutor, type TransactionOptions,
} from '../../core/plugin-api/adapter-kit.js';
import { mysqlIntrospectionQueries } from './mysql-introspector.js';
import { readMysqlOwnPrivileges } from './mysql-roles.js';
import { streamStatement, type StreamingConnection } from './mysql-stream.js';
import { mysqlCodec, mysqlWithTimeZone, type MysqlField } from './mysql-types.js';

/**
 * knex.raw on mysql2 returns `[rows, fields]`; a statement without a result set gives a header instead of
 * rows, and a CALL gives one `[rows, fields]` pair per result set, nested.
 */
type MysqlRows = Record<string, unknown>[] | { affectedRows?: number };
type MysqlRaw = [MysqlRows | MysqlRows[], MysqlField[] | MysqlField[][] | undefined];

/** The first result set of a raw response. */
function firstResult([rows, fields]: MysqlRaw): [MysqlRows, MysqlField[] | undefined] {
  if (Array.isArray(fields) && Array.isArray(fields[0])) {
    return [(rows as MysqlRows[])[0] ?? [], fields[0]];
  }
  return [rows as MysqlRows, fields as MysqlField[] | undefined];
}

/** What the datasource uses of knex's mysql2 client: its pool, and `KILL QUERY` from a connection of its own. */
interface KnexMysqlClient {
  acquireConnection(): Promise<StreamingConnection>;
  releaseConnection(connection: StreamingConnection): Promise<void>;
  cancelQuery(connection: StreamingConnection): Promise<unknown>;
}

/** Opens a pool logging in as `login`, each new connection running `setup` once. */
export type LoginPoolOpener = (login: RoleLogin, setup: readonly string[]) => Knex;

/**
 * A MySQL or MariaDB datasource. A caller's statement (`QueryOptions.scope`, docs/governed-execution.md)
 * runs on a pool logging in as the user of the caller's role, its connections set once to the scope
 * (read-only, time limit): MySQL adds a role's privileges to the login's, so only a login of its own holds
 * exactly the grants.
 */
export class MysqlDatasource extends KnexDatasource {
  private mariadb: Promise<boolean> | undefined;
  private logins = new Map<string, RoleLogin>();
  /** The pools of the scopes in use, by user, read-only mode and time limit. */
  private readonly pinned = new Map<string, Knex>();

  constructor(name: string, dialect: SqlDialect, knex: Knex, private readonly openLogin: LoginPoolOpener) {
    super(name, dialect, knex);
  }

  override query(sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    const { scope } = options;
    if (scope === undefined) return this.execute(this.knex, sql, bindings, options);
    return this.scopePool(scope, options.timeoutMs).then((pool) => this.execute(pool, sql, bindings, options));
  }

  override async transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    const { scope, timeoutMs, deadline } = options;
    if (scope === undefined) return super.transaction(work);
    const pool = await this.scopePool(scope, timeoutMs);
    return this.transactionWithin(pool, deadline, (trx) => work(this.executorOf(trx)));
  }

  /**
   * Replaces the logins (and closes the pools of the previous ones), after checking that each connects;
   * reads what each of the operator's holds.
   */
  async useRoleLogins(logins: readonly RoleLogin[]): Promise<LoginHoldings[]> {
    const holdings: LoginHoldings[] = [];
    for (const login of logins) {
      const pool = this.openLogin(login, []);
      try {
        const rows = async (sql: string, bindings: readonly unknown[]) => {
          const [found] = await this.run(sql, bindings, pool);
          return Array.isArray(found) ? found as Record<string, JsonValue>[] : [];
        };
        if ('password' in login) await rows('select 1', []);
        else holdings.push({ role: login.role, ...(await readMysqlOwnPrivileges(rows)) });
      } catch (error) {
        throw new Error(`user of database role ${login.role}: ${messageOf(error)}`);
      } finally {
        await pool.destroy();
      }
    }
    const previous = [...this.pinned.values()];
    this.pinned.clear();
    this.logins = new Map(logins.map((login) => [login.role, login]));
    await Promise.allSettled(previous.map((pool) => pool.destroy()));
    return holdings;
  }

  /** Opened on first use; closed with the datasource or when the logins change. */
  private async scopePool(scope: ExecutionScope, timeoutMs: number | undefined): Promise<Knex> {
    const key = `${scope.role}\u0000${scope.readOnly}\u0000${timeoutMs ?? ''}`;
    const open = this.pinned.get(key);
    if (open) return open;
    const login = this.logins.get(scope.role);
    // a role set no user stands for (several data roles, users the operator made one per data role)
    if (!login) throw denialError(deny('forbidden', `no database user stands for the caller's data roles (${scope.role})`));
    const setup = [
      ...(scope.readOnly ? ['set session transaction read only'] : []),
      // a whole number of milliseconds: MariaDB takes seconds, MySQL milliseconds (SELECT only)
      ...(timeoutMs === undefined ? [] : [await this.isMariadb()
        ? `set session max_statement_time = ${Math.ceil(timeoutMs) / 1000}`
        : `set session max_execution_time = ${Math.ceil(timeoutMs)}`]),
    ];
    const again = this.pinned.get(key);
    if (again) return again;
    const pool = this.openLogin(login, setup);
    this.pinned.set(key, pool);
    return pool;
  }

  protected override async release(): Promise<void> {
    await Promise.allSettled([...this.pinned.values()].map((pool) => pool.destroy()));
    await super.release();
  }

  protected async execute(runner: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions = {}): Promise<QueryResult> {
    if (runner.isTransaction !== true) return this.pooledQuery(runner, sql, bindings, options);
    const [rows, fields] = await this.run(sql, bindings, runner);
    if (!Array.isArray(rows) || !fields) {
      return encodeResult([], [], { affectedRows: Array.isArray(rows) ? 0 : (rows.affectedRows ?? 0) });
    }
    const columns = fields.map((field) => ({ name: field.name, ...mysqlCodec(field) }));
    return encodeResult(columns, rows, { maxRows: options.maxRows, maxBytes: options.maxBytes });
  }

  /**
   * A statement outside a transaction, on a pooled mysql2 connection directly: its rows are read as they
   * arrive, within the limits of `options`, and the statement is ended on the server once cut or aborted
   * (mysql-stream.ts). The kill comes from a short-lived connection of the pool's own login (knex's
   * `cancelQuery`): a user may always kill its own statements, and the kill takes no slot of a pool the
   * runaway statements may fill. The connection then goes back to its pool, usable.
   */
  private async pooledQuery(pool: Knex, sql: string, bindings: readonly unknown[], options: QueryOptions): Promise<QueryResult> {
    const client = pool.client as unknown as KnexMysqlClient;
    const connection = await client.acquireConnection();
    try {
      return await streamStatement(connection, sql, bindings, options, (running) => killQuery(client, running));
    } catch (error) {
      // a connection the server ended, or one that no longer answers, is closed and never handed out again
      if (isConnectionFailure(error) || isDeadlineExceeded(error)) this.abandonConnection(connection, error as Error);
      throw error;
    } finally {
      await client.releaseConnection(connection);
    }
  }

  protected override abandonConnection(connection: unknown, error: Error): void {
    Object.assign(connection as object, { __knex__disposed: error });
    // the socket itself: mysql2's destroy() only ends it politely and silences the loss, so a command waiting
    // on a server that stopped answering would wait on; a destroyed socket fails it (and any later one) at once
    (connection as StreamingConnection).stream.destroy();
  }

  /** On the login's pool with a deadline: a server that stopped answering fails the ping and frees its connection. */
  override async ping(options: PingOptions = {}): Promise<void> {
    await this.pooledQuery(this.knex, 'select 1', [], { timeoutMs: PING_TIMEOUT_MS, deadline: options.deadline });
  }

  async introspect(schemas: readonly string[]): Promise<Catalog> {
    const mariadb = await this.isMariadb();
    const read: RowReader = async ({ sql, bindings }) => {
      const [rows] = await this.run(sql, bindings);
      return Array.isArray(rows) ? rows : [];
    };
    return readCatalog(schemas, mysqlIntrospectionQueries(schemas, { mariadb }), read, {
      logicalType: (type) => this.dialect.logicalType(type),
      withTimeZone: mysqlWithTimeZone,
    });
  }

  private async run(sql: string, bindings: readonly unknown[], runner: Knex = this.knex): Promise<[MysqlRows, MysqlField[] | undefined]> {
    return firstResult((await runner.raw(sql, bindings as Knex.RawBinding[])) as MysqlRaw);
  }

  /** MariaDB reports JSON columns differently (see mysql-introspector.ts), and limits time in seconds. */
  private async isMariadb(): Promise<boolean> {
    this.mariadb ??= this.run('select version() as version', []).then(
      ([rows]) => Array.isArray(rows) && String(rows[0]?.['version'] ?? '').includes('MariaDB'),
      (error: unknown) => {
        this.mariadb = undefined; // ask again next time
        throw error;
      },
    );
    return this.mariadb;
  }
}

/** A server that does not answer a kill must not hold the statement's connection, and its caller, forever. */
const KILL_LIMIT_MS = 5_000;

/** `KILL QUERY <thread id>` (the id a number from the driver, bound); a kill that fails leaves the statement to its time limit. */
async function killQuery(client: KnexMysqlClient, connection: StreamingConnection): Promise<void> {
  if (connection.threadId === null) return;
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((done) => (timer = setTimeout(done, KILL_LIMIT_MS)));
  await Promise.race([client.cancelQuery(connection).catch(() => undefined), limit]);
  clearTimeout(timer);
}
