/**
 * What the SQL front door answers when a statement fails: an ErrorResponse with a SQLSTATE, as a PostgreSQL
 * server would send for the same situation (docs/sql.md#errors). The database's own message is not passed
 * on, as on every route (it may quote data): its SQLSTATE is.
 */
import type { Denial, DenialCode } from '../plugin-api/denial.js';
import { ForbiddenError, InputError, LimitError } from '../plugin-api/errors.js';
import { CatalogQueryError } from './catalog/index.js';
import { QUERY_CANCELED, statementFailure } from '../sql/statement-failure.js';

/** A failure answered with this SQLSTATE and message; FATAL ones end the connection. */
export class WireError extends Error {
  constructor(readonly sqlState: string, message: string, readonly detail?: string, readonly severity: 'ERROR' | 'FATAL' = 'ERROR') {
    super(message);
    this.name = 'WireError';
  }
}

/** The SQLSTATE PostgreSQL gives each kind of refusal. */
const DENIAL_STATES: Readonly<Record<DenialCode, string>> = {
  forbidden: '42501', // insufficient_privilege
  function_not_allowed: '42501',
  unknown_relation: '42P01', // undefined_table
  unqualified_relation: '42P01',
  not_read_only: '25006', // read_only_sql_transaction
  unparseable: '42601', // syntax_error
  multiple_statements: '42601',
  statement_too_complex: '54001', // statement_too_complex
};

/** An analyzer's (or the database's) refusal; `detail` carries the machine code and what was refused. */
export function denialWireError(denial: Denial): WireError {
  const detail = `denial: ${denial.code}${denial.resource === undefined ? '' : `; resource: ${denial.resource}`}`;
  return new WireError(DENIAL_STATES[denial.code], denial.reason, detail);
}

/** A failed statement as the client sees it. `cancelled` says the client asked for it. */
export function statementWireError(error: unknown, cancelled: boolean): WireError {
  if (error instanceof WireError) return error;
  // the mirror holds only what the caller may see: its message names nothing else
  if (error instanceof CatalogQueryError) return new WireError(error.code, error.message, error.detail);
  if (error instanceof ForbiddenError) return new WireError('42501', error.message, `denial: ${String(error.details?.['denial'] ?? 'forbidden')}`);
  // a statement over several datasources: a construct its plan cannot evaluate, or one of its caps
  if (error instanceof InputError && error.code === 'federation_unsupported') return new WireError('0A000', error.message, 'code: federation_unsupported');
  if (error instanceof LimitError) return new WireError('54000', error.message, `code: ${error.code}`);
  const failure = statementFailure(error);
  if (failure.denial) return denialWireError(failure.denial);
  if (failure.kind === 'timeout' || cancelled) {
    return new WireError(QUERY_CANCELED, cancelled ? 'canceling statement due to user request' : 'canceling statement due to statement timeout');
  }
  switch (failure.kind) {
    case 'row_too_large': return new WireError('54000', 'a row of the result is larger than the service sends (server.maxResultBytes)');
    case 'unavailable': return new WireError('57P03', 'the datasource is unavailable');
    default: {
      const { code } = failure;
      const state = code !== undefined && /^[0-9A-Z]{5}$/.test(code) ? code : 'XX000';
      return new WireError(state, `the database refused the statement (${code ?? 'no code'})`);
    }
  }
}
