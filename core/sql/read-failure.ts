import { denialError, deny } from '../plugin-api/denial.js';
import { DeadlineError, InputError, LimitError, type ServiceError } from '../plugin-api/errors.js';
import { statementFailure, unavailableError, type StatementFailure } from './statement-failure.js';

/** A caller's read as its errors name it: what ran (`query customer_orders`, `the semantic query`), where, within what. */
export interface CallerRead {
  subject: string;
  datasource: string;
  timeoutMs: number;
  maxResultBytes: number;
}

/** 422 `result_too_large`: the result, or one of its rows, is over `server.maxResultBytes`. */
export function resultTooLarge(read: CallerRead, cause?: unknown): LimitError {
  return new LimitError('result_too_large', `${read.subject}: the result is larger than ${read.maxResultBytes} bytes (server.maxResultBytes)`, {
    details: { limitBytes: read.maxResultBytes },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The 403 of a statement the database refused as the caller's role, as the analyzer's denials answer. */
export function databaseDenialError(failure: StatementFailure): ServiceError {
  return denialError(failure.denial ?? deny('forbidden', 'the database refused the statement'));
}

/**
 * A failed read of a caller's as the service's error, the same on every read route: refused by the database
 * 403 (as the analyzer's denials), a row over the result budget 422, out of time 504, unreachable 503.
 * What each route words itself (a value the database refused, anything else) comes from `otherwise`.
 */
export function readFailure(error: unknown, read: CallerRead, otherwise: (failure: StatementFailure) => ServiceError): ServiceError {
  // a federated plan's caps and refused constructs answer as they are
  if (error instanceof LimitError || (error instanceof InputError && error.code === 'federation_unsupported')) return error;
  const failure = statementFailure(error);
  switch (failure.kind) {
    case 'denied':
      return databaseDenialError(failure);
    case 'row_too_large':
      return resultTooLarge(read, failure.driverError);
    case 'timeout':
      return new DeadlineError('statement_timeout', `${read.subject} ran longer than ${read.timeoutMs} ms (server.requestTimeoutMs)`, { cause: failure.driverError });
    case 'unavailable':
      return unavailableError(read.datasource, error);
    default:
      return otherwise(failure);
  }
}
