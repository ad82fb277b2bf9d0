import type { Knex } from 'knex';
import type { Catalog } from '../plugin-api/catalog.js';
import { UnavailableError } from '../plugin-api/errors.js';
import type {
  Datasource, DatasourceCursor, LoginHoldings, QueryOptions, QueryResult, RoleLogin, SqlDialect, SqlExecutor, TransactionOptions, WireForwardOptions, WireForwardOutcome,
  WireStatement,
} from '../plugin-api/sql-dialect.js';
import { driverCodeSuffix } from './driver-code.js';

/**
 * The runtime guard the core wraps every adapter's datasource in (Kysely's RuntimeDriver): it closes once,
 * refuses calls after close, and turns the errors of an unreachable datasource into
 * `UnavailableError('datasource_unavailable')`. Guarding a guarded datasource returns it unchanged. The
 * order of calls is the datasource's own: a pool's, or PGlite's host (adapters/pglite/pglite-host.ts).
 */
export function guardDatasource(datasource: Datasource): Datasource {
  if (datasource instanceof GuardedDatasource) return datasource;
  return new GuardedDatasource(datasource);
}

class GuardedDatasource implements Datasource {
  private closing: Promise<void> | undefined;

  readonly restrictSession?: (memberOf: readonly string[]) => Promise<void>;
  readonly useRoleLogins?: (logins: readonly RoleLogin[]) => Promise<LoginHoldings[]>;
  readonly forwardWire?: (statement: WireStatement, options: WireForwardOptions) => Promise<WireForwardOutcome>;
  readonly openCursor?: (sql: string, bindings: readonly unknown[], options: QueryOptions) => Promise<DatasourceCursor>;

  constructor(private readonly inner: Datasource) {
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
    this.closing ??= this.inner.close();
    return this.closing;
  }

  private async run<T>(call: () => Promise<T>): Promise<T> {
    if (this.closing) throw new UnavailableError('datasource_unavailable', `datasource "${this.name}" is closed`);
    try {
      return await call();
    } catch (error) {
      throw isConnectionFailure(error) ? unavailableError(this.name, error) : error;
    }
  }
}

/** Node and driver error codes that mean the server cannot be reached or refused the session. */
const CONNECTION_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed',
  // mysql2
  PROTOCOL_CONNECTION_LOST: 'connection lost',
  ER_ACCESS_DENIED_ERROR: 'authentication failed',
  ER_DBACCESS_DENIED_ERROR: 'authentication failed',
  ER_CON_COUNT_ERROR: 'too many connections',
  // tedious
  ESOCKET: 'connection failed',
  ETIMEOUT: 'connection timed out',
  ELOGIN: 'authentication failed',
  ECLOSE: 'connection closed',
  EINSTLOOKUP: 'instance not found',
  // oracledb
  'ORA-01017': 'authentication failed',
};

/** PostgreSQL SQLSTATE classes 08 (connection exception), 28 (authorization), 53300 and 57P01-03 (shutdown). */
const PG_CONNECTION_STATE = /^(08[0-9A-Z]{3}|28[0-9A-Z]{3}|53300|57P0[1-3])$/;
/** oracledb: NJS-500..503 and 510 network errors, listener errors ORA-12xxx, lost session ORA-03113/4/35, DPI-1010/1080. */
const ORACLE_CONNECTION_CODE = /^(NJS-50[0-3]|NJS-510|ORA-12\d{3}|ORA-0311[34]|ORA-03135|DPI-10[18]0)$/;
/**
 * pg, PGlite and mysql2 errors without a code: a statement handed a connection whose loss the driver already
 * saw fails with the last two, before reaching the server.
 */
const CONNECTION_MESSAGE = /^(Connection terminated|timeout exceeded when trying to connect|PGlite is closed|Client has encountered a connection error and is not queryable|Can't add new command when connection is in closed state)/;

/**
 * Whether an error (or its cause, or one of an AggregateError's errors) says the datasource is unreachable.
 * Returns the reason to show, never the driver's message, which may hold a host name or a user.
 */
export function connectionFailureReason(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 4) return undefined;
  if (error.name === 'KnexTimeoutError') return 'timed out waiting for a connection';
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    const known = CONNECTION_CODES[code];
    if (known) return `${known} (${code})`;
    if (PG_CONNECTION_STATE.test(code)) return code.startsWith('28') ? `authentication failed (${code})` : `connection failed (${code})`;
    if (ORACLE_CONNECTION_CODE.test(code)) return `connection failed (${code})`;
  }
  if (CONNECTION_MESSAGE.test(error.message)) return 'connection closed';
  const nested = error instanceof AggregateError ? error.errors : [];
  for (const inner of [error.cause, ...nested]) {
    const reason = connectionFailureReason(inner, depth + 1);
    if (reason) return reason;
  }
  return undefined;
}

export function isConnectionFailure(error: unknown): boolean {
  return connectionFailureReason(error) !== undefined;
}

/**
 * The UnavailableError for a datasource that failed: its message names the datasource and a short reason,
 * never a password or connection string; the driver's error stays in `cause` for the logs.
 */
export function unavailableError(datasource: string, error: unknown): UnavailableError {
  if (error instanceof UnavailableError) return error;
  const reason = connectionFailureReason(error) ?? `could not connect${driverCodeSuffix(error)}`;
  return new UnavailableError('datasource_unavailable', `datasource "${datasource}" is unavailable: ${reason}`, {
    details: { datasource },
    cause: error,
  });
}
