import { ConstantBackoff, handleWhenResult, isTaskCancelledError, retry, timeout, TimeoutStrategy, wrap } from 'cockatiel';
import { DeadlineError } from '../../plugin-api/errors.js';
import type { BuiltStatement, JsonValue, QueryResult } from '../../plugin-api/sql-dialect.js';
import type { PlannedWait } from './action-plan.js';
import { waitStatement, type ContextVariables } from './action-statements.js';

/**
 * Polls until the wait's read finds a row (`waitUntilEffective`, docs/endpoints.md): first at once, then every
 * `checkEverySeconds` while the next check still falls within `maxSeconds`. A read that hangs is cut off one
 * interval after `maxSeconds`. Resolves with the row (its `fields`). `read` runs the statement as the caller, at most one row.
 * @throws DeadlineError `wait_timeout` when no row appeared in time.
 */
export async function waitUntilEffective(
  operation: string, wait: PlannedWait, context: ContextVariables, read: (statement: BuiltStatement) => Promise<QueryResult>,
): Promise<Record<string, JsonValue>> {
  const statement = waitStatement(wait, context);
  const polling = retry(handleWhenResult((row) => row === undefined), {
    maxAttempts: Math.floor(wait.maxSeconds / wait.checkEverySeconds),
    backoff: new ConstantBackoff(wait.checkEverySeconds * 1000),
  });
  const deadline = timeout((wait.maxSeconds + wait.checkEverySeconds) * 1000, TimeoutStrategy.Aggressive);
  let row: Record<string, JsonValue> | undefined;
  try {
    row = await wrap(deadline, polling).execute(async () => (await read(statement)).rows[0]);
  } catch (error) {
    if (!isTaskCancelledError(error)) throw error;
  }
  if (row === undefined) {
    throw new DeadlineError('wait_timeout', `operation ${operation}: no matching row in ${wait.target.entity} after ${wait.maxSeconds} s`);
  }
  return row;
}
