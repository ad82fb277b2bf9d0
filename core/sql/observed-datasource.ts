import type { Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import type {
  Datasource, DatasourceCursor, LoginHoldings, QueryOptions, QueryResult, RoleLogin, SqlDialect, SqlExecutor, TransactionOptions, WireForwardOptions, WireForwardOutcome,
  WireStatement,
} from '../plugin-api/sql-dialect.js';
import { failureOutcome, type StatementObserver } from './statement-outcome.js';

/**
 * One service's view of a datasource: every statement it runs, in a transaction or not, is reported to the
 * service's observer with its outcome. The datasource registry puts it over each (guarded) datasource it
 * hands out, so it is the one place every statement of the service passes; the datasource under it may be
 * shared with other services in the same process, each seeing its own. Statements are reported under `name`,
 * the datasource's key in the config (a datasource handed in by a test may call itself otherwise).
 */
export function observeStatements(name: string, datasource: Datasource, observer: StatementObserver): Datasource {
  observer.opened(name, datasource);
  return new ObservedDatasource(datasource, name, observer);
}

/**
 * Counts a statement the authorizer refused as `denied` on `datasource`: it never reaches the database, so
 * the call sites of the authorizer report it. Does nothing for a datasource no service observes.
 */
export function recordDenied(datasource: Datasource): void {
  if (datasource instanceof ObservedDatasource) datasource.denied();
}

class ObservedDatasource implements Datasource {
  readonly restrictSession?: (memberOf: readonly string[]) => Promise<void>;
  readonly useRoleLogins?: (logins: readonly RoleLogin[]) => Promise<LoginHoldings[]>;
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;
  readonly openCursor?: (sql: string, bindings: readonly unknown[], options: QueryOptions) => Promise<DatasourceCursor>;

  constructor(private readonly inner: Datasource, private readonly label: string, private readonly observer: StatementObserver) {
    const restrict = inner.restrictSession?.bind(inner);
    if (restrict) this.restrictSession = restrict;
    const useLogins = inner.useRoleLogins?.bind(inner);
    if (useLogins) this.useRoleLogins = useLogins;
    const forward = inner.forwardWire?.bind(inner);
    if (forward) this.forwardWire = (statement, options) => observed(() => forward(statement, options), this.label, this.observer, options);
    const openCursor = inner.openCursor?.bind(inner);
    if (openCursor) {
      // each fetch is a statement on the database
      this.openCursor = async (sql, bindings, options) => {
        const cursor = await observed(() => openCursor(sql, bindings, options), this.label, this.observer, options);
        return {
          columns: cursor.columns,
          ...(cursor.withTimeZone && { withTimeZone: cursor.withTimeZone }),
          fetch: (count, fetching) => observed(() => cursor.fetch(count, fetching), this.label, this.observer, fetching),
          close: () => cursor.close(),
        };
      };
    }
  }

  get name(): string { return this.inner.name; }
  get dialect(): SqlDialect { return this.inner.dialect; }
  get knex(): Knex { return this.inner.knex; }

  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult> {
    return observed(() => this.inner.query(sql, bindings, options), this.label, this.observer, options);
  }

  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.inner.transaction((transaction) => work({
      query: (sql, bindings, statement) => observed(() => transaction.query(sql, bindings, statement), this.label, this.observer, statement),
    }), options);
  }

  introspect(schemas: readonly string[]): Promise<Catalog> {
    return this.inner.introspect(schemas);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  denied(): void {
    this.observer.statement(this.label, 'denied');
  }
}

async function observed<T>(
  run: () => Promise<T>, datasource: string, observer: StatementObserver, options: QueryOptions | undefined,
): Promise<T> {
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  try {
    const result = await run();
    observer.statement(datasource, 'ok', seconds());
    return result;
  } catch (error) {
    observer.statement(datasource, failureOutcome(error, options), seconds());
    throw error;
  }
}
