import type { Principal } from '../plugin-api/auth-scheme.js';
import { isDenial } from '../plugin-api/denial.js';
import { effectiveGrants } from '../authorization/grants.js';
import { authorizeVdbStatement } from '../authorization/sql-authorizer.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';
import { driverCodeSuffix } from '../sql/driver-code.js';
import { recordDenied } from '../sql/observed-datasource.js';
import { raceDeadline } from './deadline.js';
import type { Observation, PendingAction } from '../plugin-api/task-documents.js';

/** How long one proposed query may run before its observation is `failed`. */
const ACTION_TIMEOUT_MS = 30_000;

/**
 * Runs one action the runtime proposed, as the caller (docs/tasks.md): re-authorized as a single
 * read-only statement within the caller's grants, then run with a row limit and a timeout. A denial runs
 * nothing; neither a denial nor a failure ends the task: the runtime reads them as observations.
 */
export async function runPendingAction(action: PendingAction, bound: VdbHandle, caller: Principal, maxRows: number): Promise<Observation> {
  const decision = await authorizeVdbStatement(bound, action.sql, effectiveGrants(bound.vdb, caller), true);
  if (isDenial(decision)) {
    recordDenied(bound.datasource);
    return failedObservation(action, 'denied', decision.code, decision.reason);
  }
  const datasource = bound.datasourceFor(decision.facts.relations);
  if (!datasource) return failedObservation(action, 'denied', 'cross_datasource_query', 'the query reads relations of two datasources');
  try {
    const result = await raceDeadline(datasource.query(action.sql, [], { maxRows }), ACTION_TIMEOUT_MS,
      () => new QueryTimeout(`the query ran longer than ${ACTION_TIMEOUT_MS / 1000} s`));
    return { actionId: action.actionId, status: 'ok', ...result, error: null };
  } catch (error) {
    const message = error instanceof QueryTimeout ? error.message : `the query failed${driverCodeSuffix(error)}`;
    return failedObservation(action, 'failed', error instanceof QueryTimeout ? 'query_timeout' : 'query_failed', message);
  }
}

class QueryTimeout extends Error {}

function failedObservation(action: PendingAction, status: 'denied' | 'failed', code: string, message: string): Observation {
  return { actionId: action.actionId, status, columns: [], rows: [], rowCount: 0, truncated: false, error: { code, message } };
}
