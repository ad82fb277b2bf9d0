import type { Catalog } from '../../../core/plugin-api/catalog.js';
import type {
  BuiltStatement, Datasource, LoginHoldings, PoolUsage, QueryOptions, QueryResult, RoleLogin, SqlDialect, SqlExecutor, TableStatement, TransactionOptions,
} from '../../../core/plugin-api/sql-dialect.js';

/** A connection reset as pg, mysql2 and tedious report it. */
export function connectionReset(): Error {
  return Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
}

/**
 * A real datasource with fault injection: a statement matching an armed pattern fails once with the given
 * error instead of running (a dropped connection mid-action, a rollback that cannot run).
 */
export class FaultyDatasource implements Datasource {
  private readonly faults: { pattern: RegExp; error: () => Error }[] = [];
  /** While true, `ping` fails as an unreachable server does. */
  pingFails = false;

  /** The logins of the data roles' users, where the dialect runs callers on them (MySQL): the inner datasource's. */
  readonly useRoleLogins?: (logins: readonly RoleLogin[]) => Promise<LoginHoldings[]>;

  constructor(private readonly inner: Datasource) {
    this.useRoleLogins = inner.useRoleLogins?.bind(inner);
  }

  get name(): string { return this.inner.name; }
  get dialect(): SqlDialect { return this.inner.dialect; }

  buildStatement(statement: TableStatement): BuiltStatement {
    return this.inner.buildStatement(statement);
  }

  poolUsage(): PoolUsage | undefined {
    return this.inner.poolUsage?.();
  }

  /** The next statement matching `pattern` fails with `error()`. */
  failNext(pattern: RegExp, error: () => Error = connectionReset): void {
    this.faults.push({ pattern, error });
  }

  /** Drops faults that did not fire. */
  reset(): void {
    this.faults.length = 0;
  }

  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    return this.faulted(sql, () => this.inner.query(sql, bindings, options));
  }

  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.inner.transaction((transaction) => work({
      query: (sql, bindings, queryOptions) => this.faulted(sql, () => transaction.query(sql, bindings, queryOptions)),
    }), options);
  }

  introspect(schemas: readonly string[]): Promise<Catalog> { return this.inner.introspect(schemas); }
  ping(): Promise<void> { return this.pingFails ? Promise.reject(connectionReset()) : this.inner.ping(); }
  close(): Promise<void> { return this.inner.close(); }

  private async faulted(sql: string, run: () => Promise<QueryResult>): Promise<QueryResult> {
    const at = this.faults.findIndex((fault) => fault.pattern.test(sql));
    if (at >= 0) {
      const [fault] = this.faults.splice(at, 1);
      throw fault?.error();
    }
    return run();
  }
}
