import type { Principal } from '../plugin-api/auth-scheme.js';
import { isDenial, type Denial } from '../plugin-api/denial.js';
import { ForbiddenError } from '../plugin-api/errors.js';
import { callerExecutor, MAX_ROW_BYTES } from '../authorization/caller-execution.js';
import { effectiveGrants } from '../authorization/grants.js';
import { authorizeVdbStatement } from '../authorization/sql-authorizer.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { recordDenied } from '../sql/observed-datasource.js';
import { databaseDenial, isRowTooLarge } from '../sql/sql-failure.js';
import { raceDeadline } from './deadline.js';
import type { Observation, PendingAction } from '../plugin-api/task-documents.js';

/** How long one proposed query may run before its observation is `failed`. */
const ACTION_TIMEOUT_MS = 30_000;

/** SQLSTATE of a statement the database cancelled at its time limit (`statement_timeout`). */
const QUERY_CANCELED = '57014';

/**
 * Runs one action the runtime proposed, as the caller (docs/tasks.md): re-authorized as a single
 * read-only statement within the caller's grants, then run as the caller's database role, read-only, with a
 * row limit and a timeout. A denial, the analyzer's or the database's, runs nothing (or nothing more);
 * neither a denial nor a failure ends the task: the runtime reads them as observations.
 */
export async function runPendingAction(action: PendingAction, bound: VdbHandle, caller: Principal, maxRows: number): Promise<Observation> {
  const grants = effectiveGrants(bound.vdb, caller);
  const decision = await authorizeVdbStatement(bound, action.sql, grants, true);
  if (isDenial(decision)) {
    recordDenied(bound.datasource);
    return deniedObservation(action, decision);
  }
  const datasource = bound.datasourceFor(decision.facts.relations);
  if (!datasource) return failedObservation(action, 'denied', 'cross_datasource_query', 'the query reads relations of two datasources');
  try {
    const executor = callerExecutor(datasource, bound.vdb, grants, { readOnly: true, timeoutMs: ACTION_TIMEOUT_MS, maxRowBytes: MAX_ROW_BYTES });
    const result = await raceDeadline(executor.query(action.sql, [], { maxRows }), ACTION_TIMEOUT_MS,
      () => new QueryTimeout(`the query ran longer than ${ACTION_TIMEOUT_MS / 1000} s`));
    return { actionId: action.actionId, status: 'ok', ...result, error: null };
  } catch (error) {
    const denial = databaseDenial(error);
    if (denial) return deniedObservation(action, denial);
    // no database role stands for the caller's grants
    if (error instanceof ForbiddenError) return failedObservation(action, 'denied', String(error.details?.['denial'] ?? 'forbidden'), error.message);
    if (isRowTooLarge(error)) return failedObservation(action, 'failed', 'result_too_large', `a row of the result is larger than ${MAX_ROW_BYTES} bytes`);
    if (error instanceof QueryTimeout || (error as { code?: unknown } | null)?.code === QUERY_CANCELED) {
      return failedObservation(action, 'failed', 'query_timeout', `the query ran longer than ${ACTION_TIMEOUT_MS / 1000} s`);
    }
    return failedObservation(action, 'failed', 'query_failed', `the query failed${driverCodeSuffix(error)}`);
  }
}

class QueryTimeout extends Error {}

function deniedObservation(action: PendingAction, denial: Denial): Observation {
  return failedObservation(action, 'denied', denial.code, denial.reason);
}

function failedObservation(action: PendingAction, status: 'denied' | 'failed', code: string, message: string): Observation {
  return { actionId: action.actionId, status, columns: [], rows: [], rowCount: 0, truncated: false, error: { code, message } };
}
