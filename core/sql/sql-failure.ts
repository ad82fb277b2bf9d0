import { denialError, deny, type Denial, type DenialCode } from '../plugin-api/denial.js';
import { ROW_TOO_LARGE_MARK } from '../plugin-api/dialect-base.js';
import { UnavailableError, type ForbiddenError, type InputError } from '../plugin-api/errors.js';
import { isConnectionFailure } from './guarded-datasource.js';

/**
 * What a failed statement means for the caller, whatever the driver: the database refused it as the
 * caller's role (403, like the analyzer's denials), a row over the result budget (422), the statement ran
 * out of time or was cancelled (504), a constraint refused the data (409), a value the column cannot hold
 * (400), the datasource is unreachable (503), or anything else (500).
 */
export type SqlFailureKind = 'denied' | 'row_too_large' | 'timeout' | 'constraint' | 'invalid_value' | 'unavailable' | 'other';

/**
 * PostgreSQL's `query_canceled`: the plugin API asks every dialect to fail a statement over its time limit,
 * or cancelled because its request or task ended, with it.
 */
export const QUERY_CANCELED = '57014';

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

/**
 * The denial a failed statement stands for when the database refused it as the caller's role: every route
 * answers it as it answers the analyzer's (403 `forbidden`, a `denied` task observation). The database's
 * message is left out, as for every driver error.
 */
export function databaseDenial(error: unknown): Denial | undefined {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  const denied = typeof code === 'string' ? DENIED_STATES[code] : undefined;
  if (denied) return deny(denied.code, `${denied.reason} (${code as string})`);
  const refused = typeof errno === 'number' ? DENIED_ERRNOS[errno] : undefined;
  return refused && deny(refused.code, `${refused.reason} (${errno as number})`);
}

/** The 403 of a statement `classifySqlFailure` calls `denied`, as the analyzer's denials answer. */
export function databaseDenialError(error: unknown): ForbiddenError | InputError {
  return denialError(databaseDenial(error) ?? deny('forbidden', 'the database refused the statement'));
}

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

/** Whether a statement failed because `SqlDialect.boundRowBytes` made the server refuse a row over the bound. */
export function isRowTooLarge(error: unknown): boolean {
  return error instanceof Error && error.message.includes(ROW_TOO_LARGE_MARK);
}

/** Whether the error or one of its causes carries the SQLSTATE `code`: the guard and knex wrap drivers' errors. */
export function hasSqlState(error: unknown, code: string, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  return (error as { code?: unknown }).code === code || hasSqlState(error.cause, code, depth + 1);
}

export function classifySqlFailure(error: unknown): SqlFailureKind {
  if (error instanceof UnavailableError || isConnectionFailure(error)) return 'unavailable';
  if (!(error instanceof Error)) return 'other';
  if (databaseDenial(error)) return 'denied';
  // before class 22: the bound fails with a data exception that names the mark
  if (isRowTooLarge(error)) return 'row_too_large';
  if (hasSqlState(error, QUERY_CANCELED)) return 'timeout';
  const { code, errno, number, errorNum } = error as { code?: unknown; errno?: unknown; number?: unknown; errorNum?: unknown };
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    // a PostgreSQL SQLSTATE: class 23 integrity constraint violation, class 22 data exception
    if (code.startsWith('23')) return 'constraint';
    if (code.startsWith('22')) return 'invalid_value';
  }
  if (typeof errno === 'number') {
    if (MYSQL_CONSTRAINT.has(errno)) return 'constraint';
    if (MYSQL_INVALID.has(errno)) return 'invalid_value';
  }
  if (typeof number === 'number') {
    if (MSSQL_CONSTRAINT.has(number)) return 'constraint';
    if (MSSQL_INVALID.has(number)) return 'invalid_value';
  }
  if (typeof errorNum === 'number') {
    if (ORACLE_CONSTRAINT.has(errorNum)) return 'constraint';
    if (ORACLE_INVALID.has(errorNum)) return 'invalid_value';
  }
  return 'other';
}
