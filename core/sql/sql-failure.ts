import { UnavailableError } from '../plugin-api/errors.js';
import { isConnectionFailure } from './guarded-datasource.js';

/**
 * What a failed statement means for the caller, whatever the driver: a constraint refused the data (409),
 * a value the column cannot hold (400), the datasource is unreachable (503), or anything else (500).
 */
export type SqlFailureKind = 'constraint' | 'invalid_value' | 'unavailable' | 'other';

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

export function classifySqlFailure(error: unknown): SqlFailureKind {
  if (error instanceof UnavailableError || isConnectionFailure(error)) return 'unavailable';
  if (!(error instanceof Error)) return 'other';
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
