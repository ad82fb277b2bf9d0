import { deny, type Denial, type DenialCode } from '../plugin-api/denial.js';
import { ROW_TOO_LARGE_MARK } from '../plugin-api/dialect-base.js';
import { UnavailableError } from '../plugin-api/errors.js';
import { driverCodeSuffix } from './driver-code.js';

/**
 * What a failed statement means, whatever the driver: the database refused it as the caller's role, a row
 * over the result budget, the statement ran out of time or was cancelled, a constraint refused the data, a
 * value the column cannot hold, the datasource is unreachable, or anything else. Each door words its answer
 * from this kind (HTTP status, task observation, SQLSTATE), never from the driver's error.
 */
export type StatementFailureKind = 'denied' | 'row_too_large' | 'timeout' | 'constraint' | 'invalid_value' | 'unavailable' | 'other';

/**
 * PostgreSQL's `query_canceled`: the plugin API asks every dialect to fail a statement over its time limit,
 * or cancelled because its request or task ended, with it.
 */
export const QUERY_CANCELED = '57014';

/**
 * A statement that failed on the database, classified once (`statementFailure`): the runtime seam throws it
 * for every driver error, so that every door reads the same kind. `code` is the driver's short code (a
 * SQLSTATE, an errno name), the driver's error stays in `cause` (logs, and a refused value's field).
 */
export class StatementFailure extends Error {
  override readonly name = 'StatementFailure';

  constructor(
    readonly kind: StatementFailureKind,
    /** The driver error that told the kind: `cause` itself, or an error in its `cause` chain. */
    readonly driverError: unknown,
    /** The SQLSTATE where the driver gave one (PostgreSQL, PGlite), else the driver's own code. */
    readonly code: string | undefined,
    /** For `denied`: the refusal, worded as the analyzer's are. */
    readonly denial: Denial | undefined,
    /** For `unavailable`: a short reason, never the driver's message (which may hold a host name or a user). */
    readonly reason: string | undefined,
    cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : 'the statement failed', { cause });
  }

  /** The constraint a `constraint` failure names, where the driver tells it (pg's `constraint`). */
  get constraint(): string | undefined {
    const constraint = (this.driverError as { constraint?: unknown } | null)?.constraint;
    return typeof constraint === 'string' ? constraint : undefined;
  }
}

/**
 * SQLSTATEs of a statement the database refused as the caller's database role (docs/governed-execution.md):
 * a privilege the role lacks (42501, PostgreSQL and PGlite), a write in a read-only transaction (25006).
 */
const LACKS_PRIVILEGE = { code: 'forbidden', reason: 'the database refused the statement: the caller\'s data roles do not grant a privilege it needs' } as const;
const WRITES = { code: 'not_read_only', reason: 'the database refused the statement: it writes, and only reading statements can run here' } as const;
const DENIED_STATES: Readonly<Record<string, { code: DenialCode; reason: string }>> = { '42501': LACKS_PRIVILEGE, '25006': WRITES };

/**
 * MySQL and MariaDB error numbers of a statement refused as the caller's user: a table (1142), column (1143)
 * or routine (1370) privilege it lacks, a global one (1227: `FILE` for `INTO OUTFILE`, `SUPER`), a write in a
 * read-only transaction (1792).
 */
const DENIED_ERRNOS: Readonly<Record<number, { code: DenialCode; reason: string }>> = {
  1142: LACKS_PRIVILEGE, 1143: LACKS_PRIVILEGE, 1227: LACKS_PRIVILEGE, 1370: LACKS_PRIVILEGE, 1792: WRITES,
};

/** MySQL/MariaDB errno: duplicate key, foreign keys, not null, check (MySQL 3819, MariaDB 4025). */
const MYSQL_CONSTRAINT = new Set([1062, 1216, 1217, 1451, 1452, 1048, 3819, 4025]);
/** Out of range, incorrect value or date, data too long, invalid JSON, truncated value. */
const MYSQL_INVALID = new Set([1264, 1265, 1292, 1366, 1406, 3140, 1411]);
/** SQL Server: primary/unique key, foreign key or check, not null. */
const MSSQL_CONSTRAINT = new Set([2627, 2601, 547, 515]);
/** SQL Server: conversion failed, arithmetic overflow, string or binary data truncated. */
const MSSQL_INVALID = new Set([241, 245, 8114, 8115, 8152, 2628]);
const ORACLE_CONSTRAINT = new Set([1, 1400, 2290, 2291, 2292]);
const ORACLE_INVALID = new Set([1722, 1830, 1840, 1841, 1861, 12899, 1438]);

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
const SQLSTATE = /^[0-9A-Z]{5}$/;
/** How far down `cause` (and an AggregateError's errors) a driver's error is looked for: knex and the adapters wrap it. */
const MAX_DEPTH = 4;

interface Told {
  kind: StatementFailureKind;
  error: Error;
  denial?: Denial;
  reason?: string;
}

/** What one error says by itself, without looking at its causes. */
function tell(error: Error): Told | undefined {
  const { code, errno, number, errorNum } = error as { code?: unknown; errno?: unknown; number?: unknown; errorNum?: unknown };
  if (error.name === 'KnexTimeoutError') return { kind: 'unavailable', error, reason: 'timed out waiting for a connection' };
  if (typeof code === 'string') {
    const known = CONNECTION_CODES[code];
    if (known) return { kind: 'unavailable', error, reason: `${known} (${code})` };
    if (PG_CONNECTION_STATE.test(code)) return { kind: 'unavailable', error, reason: code.startsWith('28') ? `authentication failed (${code})` : `connection failed (${code})` };
    if (ORACLE_CONNECTION_CODE.test(code)) return { kind: 'unavailable', error, reason: `connection failed (${code})` };
  }
  if (CONNECTION_MESSAGE.test(error.message)) return { kind: 'unavailable', error, reason: 'connection closed' };
  const deniedState = typeof code === 'string' ? DENIED_STATES[code] : undefined;
  if (deniedState) return { kind: 'denied', error, denial: deny(deniedState.code, `${deniedState.reason} (${code as string})`) };
  const deniedErrno = typeof errno === 'number' ? DENIED_ERRNOS[errno] : undefined;
  if (deniedErrno) return { kind: 'denied', error, denial: deny(deniedErrno.code, `${deniedErrno.reason} (${errno as number})`) };
  // before class 22: the bound fails with a data exception that names the mark
  if (error.message.includes(ROW_TOO_LARGE_MARK)) return { kind: 'row_too_large', error };
  if (code === QUERY_CANCELED) return { kind: 'timeout', error };
  if (typeof code === 'string' && SQLSTATE.test(code)) {
    // a PostgreSQL SQLSTATE: class 23 integrity constraint violation, class 22 data exception
    if (code.startsWith('23')) return { kind: 'constraint', error };
    if (code.startsWith('22')) return { kind: 'invalid_value', error };
  }
  if (typeof errno === 'number') {
    if (MYSQL_CONSTRAINT.has(errno)) return { kind: 'constraint', error };
    if (MYSQL_INVALID.has(errno)) return { kind: 'invalid_value', error };
  }
  if (typeof number === 'number') {
    if (MSSQL_CONSTRAINT.has(number)) return { kind: 'constraint', error };
    if (MSSQL_INVALID.has(number)) return { kind: 'invalid_value', error };
  }
  if (typeof errorNum === 'number') {
    if (ORACLE_CONSTRAINT.has(errorNum)) return { kind: 'constraint', error };
    if (ORACLE_INVALID.has(errorNum)) return { kind: 'invalid_value', error };
  }
  return undefined;
}

/** The error itself, then its causes and an AggregateError's errors, depth first, to `MAX_DEPTH`. */
function tellChain(error: unknown, depth: number): Told | undefined {
  if (!(error instanceof Error) || depth > MAX_DEPTH) return undefined;
  const told = tell(error);
  if (told) return told;
  for (const inner of [error.cause, ...(error instanceof AggregateError ? error.errors : [])]) {
    const found = tellChain(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The driver's short code of `error` or one of its causes: the first string `code` down the chain. */
function driverCode(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > MAX_DEPTH) return undefined;
  const { code } = error as { code?: unknown };
  return typeof code === 'string' ? code : driverCode(error.cause, depth + 1);
}

/**
 * The one classification of a failed statement: a StatementFailure as it is, an UnavailableError as
 * `unavailable`, any other error by what it or its causes say.
 */
export function statementFailure(error: unknown): StatementFailure {
  if (error instanceof StatementFailure) return error;
  if (error instanceof UnavailableError) {
    // the runtime's, or an adapter's: the reason is its cause's
    const told = tellChain(error.cause, 1);
    const source = told?.error ?? error;
    return new StatementFailure('unavailable', source, driverCode(source), undefined, told?.kind === 'unavailable' ? told.reason : undefined, error);
  }
  const told = tellChain(error, 0);
  const source = told?.error ?? error;
  return new StatementFailure(told?.kind ?? 'other', source, driverCode(source), told?.denial, told?.reason, error);
}

/** Whether an error (or its cause, or one of an AggregateError's errors) says the datasource is unreachable. */
export function isConnectionFailure(error: unknown): boolean {
  return connectionFailureReason(error) !== undefined;
}

/**
 * The reason a datasource is unreachable, when an error says it is: never the driver's message, which may
 * hold a host name or a user.
 */
export function connectionFailureReason(error: unknown): string | undefined {
  const failure = statementFailure(error);
  return failure.kind === 'unavailable' ? failure.reason : undefined;
}

/**
 * The UnavailableError for a datasource that failed: its message names the datasource and a short reason,
 * never a password or connection string; the driver's error stays in `cause` for the logs.
 */
export function unavailableError(datasource: string, error: unknown): UnavailableError {
  if (error instanceof UnavailableError) return error;
  const failure = statementFailure(error);
  const reason = (failure.kind === 'unavailable' ? failure.reason : undefined) ?? `could not connect${driverCodeSuffix(failure)}`;
  return new UnavailableError('datasource_unavailable', `datasource "${datasource}" is unavailable: ${reason}`, {
    details: { datasource },
    cause: error instanceof StatementFailure ? error.cause : error,
  });
}
