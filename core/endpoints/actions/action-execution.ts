import type { Logger } from 'pino';
import type { Principal } from '../../plugin-api/auth-scheme.js';
import { callerExecutor, type CallerExecutor } from '../../statements/statement-pipeline.js';
import { callerScope } from '../../authorization/caller-execution.js';
import { effectiveGrants } from '../../authorization/grants.js';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import {
  ConflictError, DeadlineError, InternalError, ServiceError, UnavailableError, type ErrorOptions,
} from '../../plugin-api/errors.js';
import { driverCodeSuffix } from '../../sql/driver-code.js';
import { refusedField } from '../refused-value.js';
import { databaseDenialError } from '../../sql/read-failure.js';
import { statementFailure, unavailableError } from '../../sql/statement-failure.js';
import type { JournaledRun, StepRecord, StepCompensation, StoredAnswer } from './action-journal.js';
import type { ActionPlan, ActionTarget, PlannedAssertion, PlannedOperation, PlannedWrite } from './action-plan.js';
import type { BuiltStatement } from '../../plugin-api/sql-dialect.js';
import { existenceStatement, writeStatement, type ActionContext } from './action-statements.js';
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
  context: ActionContext;
}

/** Who an action runs for, and the time limit of each of its statements (`server.requestTimeoutMs`). */
export interface ActionCaller {
  caller: Principal;
  timeoutMs: number;
  /** Aborted when the client has gone away: a statement still running outside a transaction is cancelled. */
  signal?: AbortSignal | undefined;
  /** The request fields, to name the one whose value the database refused. */
  fields: Readonly<Record<string, unknown>>;
}

/** How the compensations of a failed action ended: all done, one a person must repair, or one to retry later. */
export type CompensationOutcome = 'compensated' | 'needs_attention' | 'retry';

/**
 * Runs a planned action: every assertion first (a failing one stops everything, 409 `assertion_failed`),
 * then the operations in order, each in its own transaction, waiting where asked. When an operation fails,
 * the rollbacks of the operations done run in reverse order and the error lists each operation with its
 * compensation status. Compensation moves toward the desired state; it is not a database rollback.
 * Every statement runs as the caller's database role (docs/governed-execution.md): assertions and waits
 * read-only, operations and rollbacks read-write.
 */
export async function executeAction(action: string, plan: ActionPlan, by: ActionCaller, logger: Logger, run?: JournaledRun): Promise<ActionSuccess> {
  try {
    for (const assertion of plan.assertions) await checkAssertion(action, assertion, by);
  } catch (error) {
    // nothing ran: the run ends failed, with the answer a retry gets
    if (run && error instanceof ServiceError) await run.setState('failed', { response: answerOf(error) }).catch(() => undefined);
    throw error;
  }

  const context: ActionContext = {};
  let closed = false;
  const reports: OperationReport[] = plan.operations.map((operation) => ({ name: operation.name, status: 'not_run', affectedRows: 0 }));
  const last = plan.operations.length - 1;
  for (const [index, operation] of plan.operations.entries()) {
    const report = reports[index] as OperationReport;
    if (operation.skip) {
      report.status = 'skipped';
      continue;
    }
    try {
      // the last operation without a wait closes the run in its own transaction, with the answer
      const closing = index === last && !operation.wait
        ? (rows: number): StoredAnswer => ({ ok: true, body: successOf(action, reports.map((one, at) => (at === index ? { ...one, status: 'done', affectedRows: rows } : one)), context) })
        : undefined;
      const outcome = await runOperation(operation, index, context, by, run, closing);
      report.affectedRows = outcome.rows;
      report.status = 'done';
      closed = outcome.closed;
      if (operation.wait) {
        const row = await waitUntilEffective(operation.name, operation.wait, context, executorFor(operation.wait.target, true, by));
        if (operation.wait.putInContextVar) {
          context[operation.wait.putInContextVar] = row;
          // the rollback may read what the wait found: the journal keeps it as it now resolves
          if (run && operation.rollback) await run.step(stepOf(operation, index, 'done', report.affectedRows, context, by));
        }
      }
    } catch (error) {
      if (report.status === 'not_run') report.status = 'failed';
      if (run && await run.takenOver().catch(() => false)) throw new UnavailableError('action_run_taken_over', undefined, { details: { action, run: run.id }, cause: error });
      if (run) await run.setState('compensating').catch(() => undefined);
      const compensations = await compensate(action, plan.operations, reports, context, by, logger, run);
      const failure = failureOf(action, operation, error, reports, compensations.statuses, by.fields);
      if (run) await recordFailure(run, failure, compensations.outcome, logger);
      throw failure;
    }
  }
  const success = successOf(action, reports, context);
  // the answer is kept before it is given: a retry with the same Idempotency-Key gets it, never a second run
  if (run && !closed) await run.setState('completed', { response: { ok: true, body: success } });
  return success;
}

function successOf(action: string, operations: OperationReport[], context: ActionContext): ActionSuccess {
  return { action, status: 'completed', operations, context };
}

function answerOf(failure: ServiceError): StoredAnswer {
  return { ok: false, code: failure.code, message: failure.message, details: failure.details ?? null };
}

/**
 * The failed run's end in the journal: `failed` with its answer once compensated, `needs_attention` with what
 * a person needs when a compensation cannot succeed; where one may succeed later (its database was
 * unreachable), the lease is let go so that recovery retries it.
 */
async function recordFailure(run: JournaledRun, failure: ServiceError, outcome: CompensationOutcome, logger: Logger): Promise<void> {
  const response = answerOf(failure);
  try {
    if (outcome === 'needs_attention') run.journal.settings.observer?.runNeedsAttention(failure.details?.['action'] as string);
    if (outcome === 'retry') await run.setState('compensating', { lease: 0 });
    else await run.setState(outcome === 'compensated' ? 'failed' : 'needs_attention', { response, ...(outcome === 'compensated' ? {} : { problem: { reason: 'a compensation failed', details: failure.details ?? null } }) });
  } catch (error) {
    // the journal's database is down too: the lease lapses and recovery finishes the run
    logger.warn({ run: run.id, reason: messageOfError(error) }, 'the end of a failed action run could not be journaled; recovery will finish it');
  }
}

/** The caller's statements on the target's datasource, as the role of their grants on the target's VDB. */
function executorFor(target: ActionTarget, readOnly: boolean, by: ActionCaller): CallerExecutor {
  return callerExecutor(target.datasource, target.bound.vdb, effectiveGrants(target.bound.vdb, by.caller), { readOnly, timeoutMs: by.timeoutMs, signal: by.signal });
}

async function checkAssertion(action: string, assertion: PlannedAssertion, by: ActionCaller): Promise<void> {
  const statement = existenceStatement(assertion, {});
  let exists: boolean;
  try {
    exists = (await executorFor(assertion.target, true, by).query(statement.sql, statement.bindings, { maxRows: 1 })).rows.length > 0;
  } catch (error) {
    throw operationError(error, `assertion ${assertion.name}`, assertion.target.datasource.name);
  }
  if (exists !== (assertion.expect === 'exists')) {
    throw new ConflictError('assertion_failed', assertion.message, { details: { action, assertion: assertion.name } });
  }
}

/**
 * One operation in its own transaction; resolves with the rows it affected. Journaled: where the journal
 * shares the operation's database, its step is written in the same transaction (both or neither stay);
 * elsewhere, the step is written as started before and done after, so that recovery undoes it either way.
 */
async function runOperation(
  operation: PlannedOperation, position: number, context: ActionContext, by: ActionCaller, run: JournaledRun | undefined,
  closing: ((rows: number) => StoredAnswer) | undefined,
): Promise<{ rows: number; closed: boolean }> {
  const statement = writeStatement(operation, context);
  const shared = run !== undefined && run.journal.name === operation.target.datasource.name;
  if (run && !shared) {
    await run.step(stepOf(operation, position, 'started', 0, context, by));
    run.committed();
  }
  const result = await executorFor(operation.target, false, by).transaction(async (transaction) => {
    const done = await transaction.query(statement.sql, statement.bindings);
    if (run && shared) await run.step(stepOf(operation, position, 'done', done.rowCount, context, by), transaction, closing?.(done.rowCount));
    return done;
  });
  run?.committed();
  if (run && !shared) await run.step(stepOf(operation, position, 'done', result.rowCount, context, by));
  return { rows: result.rowCount, closed: shared && closing !== undefined };
}

/** The journal's step of an operation: what undoes it, as far as the context resolves its rollback now. */
function stepOf(
  operation: PlannedOperation, position: number, status: 'started' | 'done', rows: number, context: ActionContext, by: ActionCaller,
): StepRecord {
  return { position, name: operation.name, status, rows, compensation: operation.rollback ? compensationOf(operation.rollback, context, by) : null };
}

function compensationOf(rollback: PlannedWrite, context: ActionContext, by: ActionCaller): StepCompensation {
  const { datasource, bound } = rollback.target;
  let statement: BuiltStatement;
  try {
    statement = writeStatement(rollback, context);
  } catch (error) {
    // a value a later step puts in the context: recorded again once that step has run
    return { unresolved: `the rollback cannot be built yet: ${messageOfError(error)}` };
  }
  const role = callerScope(datasource.dialect, bound.vdb, effectiveGrants(bound.vdb, by.caller), false)?.role ?? null;
  return { datasource: datasource.name, role, sql: statement.sql, bindings: statement.bindings };
}

/** A compensation that failed because its database could not be reached or answer in time may succeed later. */
export function transientFailure(error: unknown): boolean {
  if (error instanceof UnavailableError) return true;
  const { kind } = statementFailure(error);
  return kind === 'unavailable' || kind === 'timeout';
}

/**
 * Runs the rollbacks of the operations done, last first; returns each operation's compensation status and
 * how they ended. Journaled, each compensation is recorded with it, in its transaction where they share a
 * database, and a step compensated already (by recovery) is not compensated again.
 */
async function compensate(
  action: string, operations: readonly PlannedOperation[], reports: readonly OperationReport[], context: ActionContext, by: ActionCaller, logger: Logger,
  run: JournaledRun | undefined,
): Promise<{ statuses: CompensationStatus[]; outcome: CompensationOutcome }> {
  const statuses: CompensationStatus[] = operations.map(() => 'none');
  let outcome: CompensationOutcome = 'compensated';
  for (let index = operations.length - 1; index >= 0; index--) {
    const operation = operations[index] as PlannedOperation;
    if ((reports[index] as OperationReport).status !== 'done' || !operation.rollback) continue;
    let statement: BuiltStatement | undefined;
    const shared = run !== undefined && run.journal.name === operation.rollback.target.datasource.name;
    try {
      statement = writeStatement(operation.rollback, context);
      const built = statement;
      await executorFor(operation.rollback.target, false, by).transaction(async (transaction) => {
        if (run && shared) await run.compensated(index, 'compensated', null, transaction);
        await transaction.query(built.sql, built.bindings);
      });
      if (run && !shared) await run.compensated(index, 'compensated', null);
      statuses[index] = 'compensated';
    } catch (error) {
      statuses[index] = 'failed';
      if (transientFailure(error)) outcome = 'retry';
      else {
        if (outcome === 'compensated') outcome = 'needs_attention';
        if (run) await run.compensated(index, 'failed', messageOfError(error)).catch(() => undefined);
      }
      // what an operator needs to repair by hand: which write stayed, and the statement that would undo it
      logger.error({
        action, operation: operation.name, entity: operation.rollback.target.entity, datasource: operation.rollback.target.datasource.name,
        rollback: statement ?? null, reason: error instanceof Error ? error.message : String(error),
      }, 'compensation failed: the operation stays applied and must be undone by hand');
    }
  }
  return { statuses, outcome };
}

function messageOfError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
