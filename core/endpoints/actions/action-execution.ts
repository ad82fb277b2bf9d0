import type { Logger } from 'pino';
import { runAuthorized, withText, type Authorization } from '../../statements/statement-pipeline.js';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import {
  ConflictError, DeadlineError, InternalError, ServiceError, UnavailableError, type ErrorOptions,
} from '../../plugin-api/errors.js';
import { driverCodeSuffix } from '../../sql/driver-code.js';
import { refusedField } from '../refused-value.js';
import { databaseDenialError } from '../../sql/read-failure.js';
import { statementFailure, unavailableError } from '../../sql/statement-failure.js';
import type { ActionAuthorizations, PlannedActionStatement } from './action-authorization.js';
import type { ActionPlan, PlannedAssertion, PlannedOperation, PlannedWrite } from './action-plan.js';
import type { BuiltStatement, QueryResult } from '../../plugin-api/sql-dialect.js';
import { existenceStatement, writeStatement, type ContextVariables } from './action-statements.js';
import { waitUntilEffective } from './wait-until-effective.js';

export type OperationStatus = 'done' | 'skipped' | 'failed' | 'not_run';
export type CompensationStatus = 'compensated' | 'failed' | 'none';

export interface OperationReport {
  name: string;
  status: OperationStatus;
  affectedRows: number;
}

/** The 200 body of `POST /api/v1/actions/run/{name}` (docs/endpoints.md). */
export interface ActionSuccess {
  action: string;
  status: 'completed';
  operations: OperationReport[];
  context: ContextVariables;
}

/** Who an action runs for, and the time limit of each of its statements (`server.requestTimeoutMs`). */
export interface ActionCaller {
  /** What the caller may run: each statement of the plan authorized (`authorizeActionPlan`). */
  authorizations: ActionAuthorizations;
  timeoutMs: number;
  /** Aborted when the client has gone away: a statement still running outside a transaction is cancelled. */
  signal?: AbortSignal | undefined;
  /** The request fields, to name the one whose value the database refused. */
  fields: Readonly<Record<string, unknown>>;
}

/**
 * Runs a planned action: every assertion first (a failing one stops everything, 409 `assertion_failed`),
 * then the operations in order, each in its own transaction, waiting where asked. When an operation fails,
 * the rollbacks of the operations done run in reverse order and the error lists each operation with its
 * compensation status. Compensation moves toward the desired state; it is not a database rollback.
 * Every statement runs through the run stage of the statement pipeline, as the caller's database role
 * (docs/governed-execution.md): assertions and waits read-only, operations and rollbacks read-write, each in
 * a transaction of its own.
 */
export async function executeAction(action: string, plan: ActionPlan, by: ActionCaller, logger: Logger): Promise<ActionSuccess> {
  for (const assertion of plan.assertions) await checkAssertion(action, assertion, by);

  const context: ContextVariables = {};
  const reports: OperationReport[] = plan.operations.map((operation) => ({ name: operation.name, status: 'not_run', affectedRows: 0 }));
  for (const [index, operation] of plan.operations.entries()) {
    const report = reports[index] as OperationReport;
    if (operation.skip) {
      report.status = 'skipped';
      continue;
    }
    try {
      report.affectedRows = await runWrite(operation, context, by);
      report.status = 'done';
      if (operation.wait) {
        const { wait } = operation;
        const row = await waitUntilEffective(operation.name, wait, context, (statement) => run(wait, statement, by, { maxRows: 1 }));
        if (operation.wait.putInContextVar) context[operation.wait.putInContextVar] = row;
      }
    } catch (error) {
      if (report.status === 'not_run') report.status = 'failed';
      const compensations = await compensate(action, plan.operations, reports, context, by, logger);
      throw failureOf(action, operation, error, reports, compensations, by.fields);
    }
  }
  return { action, status: 'completed', operations: reports, context };
}

/** Runs one statement of the plan, written as `statement`, as its authorization allows: the pipeline's run stage. */
function run(planned: PlannedActionStatement, statement: BuiltStatement, by: ActionCaller, options: { maxRows?: number; transaction?: boolean }): Promise<QueryResult> {
  const authorization: Authorization | undefined = by.authorizations.get(planned);
  // authorizeActionPlan authorizes every statement of the plan: a missing one is a fault of this module
  if (authorization === undefined) throw new InternalError('operation_failed', 'a statement of the action was not authorized');
  return runAuthorized(withText(authorization, statement), { timeoutMs: by.timeoutMs, signal: by.signal }, options);
}

async function checkAssertion(action: string, assertion: PlannedAssertion, by: ActionCaller): Promise<void> {
  const statement = existenceStatement(assertion, {});
  let exists: boolean;
  try {
    exists = (await run(assertion, statement, by, { maxRows: 1 })).rows.length > 0;
  } catch (error) {
    throw operationError(error, `assertion ${assertion.name}`, assertion.target.datasource.name);
  }
  if (exists !== (assertion.expect === 'exists')) {
    throw new ConflictError('assertion_failed', assertion.message, { details: { action, assertion: assertion.name } });
  }
}

/** One operation or rollback in its own transaction; resolves with the rows it affected. */
async function runWrite(write: PlannedWrite, context: ContextVariables, by: ActionCaller): Promise<number> {
  const statement = writeStatement(write, context);
  return (await run(write, statement, by, { transaction: true })).rowCount;
}

/** Runs the rollbacks of the operations done, last first; returns each operation's compensation status. */
async function compensate(
  action: string, operations: readonly PlannedOperation[], reports: readonly OperationReport[], context: ContextVariables, by: ActionCaller, logger: Logger,
): Promise<CompensationStatus[]> {
  const statuses: CompensationStatus[] = operations.map(() => 'none');
  for (let index = operations.length - 1; index >= 0; index--) {
    const operation = operations[index] as PlannedOperation;
    if ((reports[index] as OperationReport).status !== 'done' || !operation.rollback) continue;
    let statement: BuiltStatement | undefined;
    try {
      statement = writeStatement(operation.rollback, context);
      await run(operation.rollback, statement, by, { transaction: true });
      statuses[index] = 'compensated';
    } catch (error) {
      statuses[index] = 'failed';
      // what an operator needs to repair by hand: which write stayed, and the statement that would undo it
      logger.error({
        action, operation: operation.name, entity: operation.rollback.target.entity, datasource: operation.rollback.target.datasource.name,
        rollback: statement ?? null, reason: error instanceof Error ? error.message : String(error),
      }, 'compensation failed: the operation stays applied and must be undone by hand');
    }
  }
  return statuses;
}

/** The error of a failed action, by what failed, listing every operation and its compensation. */
function failureOf(
  action: string, operation: PlannedOperation, error: unknown, reports: readonly OperationReport[], compensations: readonly CompensationStatus[],
  fields: Readonly<Record<string, unknown>>,
): ServiceError {
  const details = {
    action,
    failedOperation: operation.name,
    operations: reports.map((report, index) => ({ ...report, compensation: compensations[index] ?? 'none' })),
  };
  const cause = operationError(error, `operation ${operation.name}`, operation.target.datasource.name, fields);
  // the cause's class, code and message: only the action's report is added
  const SameKind = cause.constructor as new (code: ErrorCode, message: string, options: ErrorOptions) => ServiceError;
  return new SameKind(cause.code, cause.message, { details: { ...(cause.details ?? {}), ...details }, cause: error });
}

/**
 * A driver error as the service's: refused by the database as the caller's role 403 `forbidden` (as the
 * analyzer's denials), constraint 409 `operation_conflict`, out of time 504 `statement_timeout`, unreachable
 * 503, other 500 `operation_failed`
 * (an action's statements run without a row bound, so a row too large is not theirs to meet).
 */
function operationError(error: unknown, what: string, datasource: string, fields: Readonly<Record<string, unknown>> = {}): ServiceError {
  if (error instanceof ServiceError && !(error instanceof UnavailableError)) return error;
  const failure = statementFailure(error);
  const code = driverCodeSuffix(failure);
  const cause = failure.driverError;
  switch (failure.kind) {
    case 'denied':
      return databaseDenialError(failure);
    case 'unavailable':
      return unavailableError(datasource, error);
    case 'timeout':
      return new DeadlineError('statement_timeout', `${what} ran out of time${code}`, { cause });
    case 'constraint':
      return new ConflictError('operation_conflict', `${what} violates a constraint${failure.constraint === undefined ? code : ` (${failure.constraint})`}`, { cause });
    case 'invalid_value': {
      const refused = refusedField(cause, fields);
      return refused === undefined
        ? new ConflictError('operation_conflict', `${what}: a value does not fit its column${code}`, { cause })
        : new ConflictError('operation_conflict', `${what}: ${refused.text}${code}`, { details: { field: refused.field }, cause });
    }
    case 'row_too_large':
    case 'other':
      return new InternalError('operation_failed', `${what} failed${code}`, { cause });
  }
}
