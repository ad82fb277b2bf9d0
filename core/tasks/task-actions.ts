import type { Principal } from '../plugin-api/auth-scheme.js';
import { isDenial, type Denial } from '../plugin-api/denial.js';
import { ForbiddenError } from '../plugin-api/errors.js';
import { authorizeStatement, runAuthorized, type AuthorizedRun } from '../statements/statement-pipeline.js';
import { effectiveGrants } from '../authorization/grants.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { statementFailure } from '../sql/statement-failure.js';
import { raceDeadline } from './deadline.js';
import type { Observation, PendingAction } from '../plugin-api/task-documents.js';
import type { CallerGrants } from '../authorization/grants.js';
import { ServiceError } from '../plugin-api/errors.js';
import { readSemanticQuery } from '../semantic-query/query-input.js';
import { authorizeCompiled, semanticDenialError, type SemanticQueries } from '../semantic-query/semantic-query-service.js';

/**
 * How long one proposed query may run before its observation is `failed`. A fixed limit, not what is left
 * of the task's deadline: PostgreSQL keeps a pool per time limit (docs/governed-execution.md); the deadline
 * cancels the statement through the task's signal instead.
 */
const ACTION_TIMEOUT_MS = 30_000;

/** What bounds one action of a task. */
export interface ActionLimits {
  /** Rows it may return: the action's `maxRows`, at most the rows left in the task's budget. */
  maxRows: number;
  /** Bytes of rows it may return (their JSON): what is left of the task's `maxObservationBytes`. */
  maxBytes: number;
  /** The task's `maxObservationBytes`: a row over it could never be observed, and the database refuses it. */
  maxRowBytes: number;
  /** Aborted when the task has ended (its deadline passed): the statement is cancelled on the server. */
  signal: AbortSignal;
}

/**
 * Runs one action the runtime proposed, as the caller (docs/tasks.md): re-authorized as a single
 * read-only statement within the caller's grants, then run as the caller's database role, read-only, with a
 * row limit, a byte budget and a time limit. A denial, the analyzer's or the database's, runs nothing (or
 * nothing more); neither a denial nor a failure ends the task: the runtime reads them as observations. A
 * result over the row limit or the byte budget is cut there (`truncated`).
 */
export async function runPendingAction(action: PendingAction, handle: VdbHandle, caller: Principal, limits: ActionLimits, semanticQueries: SemanticQueries): Promise<Observation> {
  const grants = effectiveGrants(handle.vdb, caller);
  if (action.kind === 'semanticQuery') return runSemanticAction(action, handle, grants, limits, semanticQueries);
  let decision: Awaited<ReturnType<typeof authorizeStatement>>;
  try {
    decision = await authorizeStatement({ handle, sql: action.sql, bindings: [], grants, readOnly: true });
  } catch (error) {
    // a statement over several datasources the federated plan cannot evaluate: refused before anything ran
    if (error instanceof ServiceError) return failedObservation(action, 'denied', error.code, error.message);
    throw error;
  }
  if (isDenial(decision)) return deniedObservation(action, decision);
  return execute(action, decision, limits);
}

/**
 * A semantic query: compiled by the service against the active package (its values bound), checked against
 * the caller's grants like the route does (docs/semantic-query.md), then run like any query.
 */
async function runSemanticAction(action: Extract<PendingAction, { kind: 'semanticQuery' }>, handle: VdbHandle, grants: CallerGrants, limits: ActionLimits, semanticQueries: SemanticQueries): Promise<Observation> {
  let authorized: AuthorizedRun;
  try {
    const query = readSemanticQuery(action.query);
    const { compiled, datasource } = await semanticQueries.compile(handle.vdb, query);
    const decision = authorizeCompiled(compiled, query, handle.vdb, grants, datasource);
    if (isDenial(decision)) throw semanticDenialError(decision);
    authorized = decision;
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    const osiCode = error.details?.['osiCode'];
    const message = typeof osiCode === 'string' ? `${error.message} (${osiCode})` : error.message;
    return failedObservation(action, error instanceof ForbiddenError ? 'denied' : 'failed', error.code, message);
  }
  return execute(action, authorized, limits);
}

/** Runs an authorized statement as the caller's database role (the run stage); a failure is an observation, never an error of the task. */
async function execute(action: PendingAction, authorized: AuthorizedRun, limits: ActionLimits): Promise<Observation> {
  const { maxRows, maxBytes, maxRowBytes, signal } = limits;
  const timedOut = `the query ran longer than ${ACTION_TIMEOUT_MS / 1000} s`;
  try {
    // the database cancels at the limit; the race answers even if a driver does not
    const running = runAuthorized(authorized, { timeoutMs: ACTION_TIMEOUT_MS, maxRowBytes, signal }, { maxRows, maxBytes });
    const result = await raceDeadline(running, ACTION_TIMEOUT_MS, () => new QueryTimeout(timedOut));
    const { columns, rows, rowCount, truncated } = result;
    return { actionId: action.actionId, status: 'ok', columns, rows, rowCount, truncated, error: null };
  } catch (error) {
    // no database role stands for the caller's grants
    if (error instanceof ForbiddenError) return failedObservation(action, 'denied', String(error.details?.['denial'] ?? 'forbidden'), error.message);
    if (error instanceof QueryTimeout) return failedObservation(action, 'failed', 'statement_timeout', timedOut);
    // a federated plan's cap (rows of a source, the engine's memory)
    if (error instanceof ServiceError) return failedObservation(action, 'failed', error.code, error.message);
    const failure = statementFailure(error);
    switch (failure.kind) {
      case 'denied':
        return failure.denial ? deniedObservation(action, failure.denial) : failedObservation(action, 'denied', 'forbidden', 'the database refused the statement');
      case 'row_too_large':
        return failedObservation(action, 'failed', 'result_too_large', `a row of the result is larger than the task's observation budget of ${maxRowBytes} bytes`);
      case 'timeout':
        return failedObservation(action, 'failed', 'statement_timeout', signal.aborted ? 'the task ended while the query ran: it was cancelled' : timedOut);
      default:
        return failedObservation(action, 'failed', 'query_failed', `the query failed${driverCodeSuffix(failure)}`);
    }
  }
}

class QueryTimeout extends Error {}

function deniedObservation(action: PendingAction, denial: Denial): Observation {
  return failedObservation(action, 'denied', denial.code, denial.reason);
}

function failedObservation(action: PendingAction, status: 'denied' | 'failed', code: string, message: string): Observation {
  return { actionId: action.actionId, status, columns: [], rows: [], rowCount: 0, truncated: false, error: { code, message } };
}
