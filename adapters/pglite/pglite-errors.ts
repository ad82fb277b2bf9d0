import type { WireError } from '../../core/plugin-api/adapter-kit.js';

/**
 * An error the datasource raises itself, worded and coded as PostgreSQL would, so that the core reads it
 * like a server's: by its SQLSTATE `code`.
 */
export class PgliteStateError extends Error {
  constructor(readonly code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PgliteStateError';
  }
}

/** A statement ended by its time limit or because its caller went away: 57014 (query_canceled). */
export function statementCanceled(reason: 'statement timeout' | 'user request'): PgliteStateError {
  return new PgliteStateError('57014', `canceling statement due to ${reason}`);
}

/**
 * The worker cannot answer (it stopped, or could not reopen the database): 08006 (connection_failure),
 * which the core reports as 503 `datasource_unavailable`.
 */
export function connectionFailure(message: string, cause?: unknown): PgliteStateError {
  return new PgliteStateError('08006', message, cause === undefined ? undefined : { cause });
}

/** The worker thread is gone: it ran over a limit, crashed, or was closed. */
export function workerStopped(): PgliteStateError {
  return connectionFailure('Connection terminated: the embedded database worker stopped');
}

/**
 * A statement of a transaction whose worker was ended (a statement of it ran over its limit): the
 * transaction is gone, as PostgreSQL refuses the statements of a failed transaction (25P02).
 */
export function transactionAborted(): PgliteStateError {
  return new PgliteStateError('25P02', 'current transaction is aborted: its statement was canceled and the database reopened');
}

/** The error a worker sent, with PostgreSQL's fields (`code`, `detail`, `position`...) back on it. */
export function errorFromWire(wire: WireError): Error {
  const error = Object.assign(new Error(wire.message), wire.fields);
  error.name = wire.name;
  return error;
}
