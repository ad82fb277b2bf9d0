import { DeadlineError, LimitError, type ServiceError } from '../plugin-api/errors.js';
import { unavailableError } from './guarded-datasource.js';
import { classifySqlFailure, databaseDenialError, type SqlFailureKind } from './sql-failure.js';

/** A caller's read as its errors name it: what ran (`query customer_orders`, `the semantic query`), where, within what. */
export interface ReadContext {
  subject: string;
  datasource: string;
  timeoutMs: number;
  maxResultBytes: number;
}

/** 422 `result_too_large`: the result, or one of its rows, is over `server.maxResultBytes`. */
export function resultTooLarge(read: ReadContext, cause?: unknown): LimitError {
  return new LimitError('result_too_large', `${read.subject}: the result is larger than ${read.maxResultBytes} bytes (server.maxResultBytes)`, {
    details: { limitBytes: read.maxResultBytes },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A failed read of a caller's as the service's error, the same on every read route: refused by the database
 * 403 (as the analyzer's denials), a row over the result budget 422, out of time 504, unreachable 503.
 * What each route words itself (a value the database refused, anything else) comes from `otherwise`.
 */
export function readFailure(error: unknown, read: ReadContext, otherwise: (kind: SqlFailureKind) => ServiceError): ServiceError {
  const kind = classifySqlFailure(error);
  switch (kind) {
    case 'denied':
      return databaseDenialError(error);
    case 'row_too_large':
      return resultTooLarge(read, error);
    case 'timeout':
      return new DeadlineError('statement_timeout', `${read.subject} ran longer than ${read.timeoutMs} ms (server.requestTimeoutMs)`, { cause: error });
    case 'unavailable':
      return unavailableError(read.datasource, error);
    default:
      return otherwise(kind);
  }
}
