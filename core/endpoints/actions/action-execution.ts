import type { Logger } from 'pino';
import { runAuthorized, withText, type Authorization, type RunOptions } from '../../statements/statement-pipeline.js';
import { callerScope } from '../../authorization/caller-execution.js';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import {
  ConflictError, DeadlineError, InternalError, ServiceError, UnavailableError, type ErrorOptions,
} from '../../plugin-api/errors.js';
import { driverCodeSuffix } from '../../sql/driver-code.js';
import { refusedField } from '../refused-value.js';
import { databaseDenialError } from '../../sql/read-failure.js';
import { statementFailure, unavailableError } from '../../sql/statement-failure.js';
import type { JournaledRun, StepCompensation, StepRecord, StoredAnswer } from './action-journal.js';
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

/** How the compensations of a failed action ended: all done, one a person must repair, or one to retry later. */
export type CompensationOutcome = 'compensated' | 'needs_attention' | 'retry';

/**
 * Runs a planned action: every assertion first (a failing one stops everything, 409 `assertion_failed`),
 * then the operations in order, each in its own transaction, waiting where asked. When an operation fails,
 * the rollbacks of the operations done run in reverse order and the error lists each operation with its
 * compensation status. Compensation moves toward the desired state; it is not a database rollback.
 * Every statement runs through the run stage of the statement pipeline, as the caller's database role
 * (docs/governed-execution.md): assertions and waits read-only, operations and rollbacks read-write, each in
 * a transaction of its own.
 */
export async function executeAction(action: string, plan: ActionPlan, by: ActionCaller, logger: Logger, journaled?: JournaledRun): Promise<ActionSuccess> {
  try {
    for (const assertion of plan.assertions) await checkAssertion(action, assertion, by);
  } catch (error) {
    // nothing ran: the run ends failed, with the answer a retry gets
    if (journaled && error instanceof ServiceError) await journaled.setState('failed', { response: answerOf(error) }).catch(() => undefined);
    throw error;
  }

  const context: ContextVariables = {};
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
      const outcome = await runOperation(operation, index, context, by, journaled, closing);
      report.affectedRows = outcome.rows;
      report.status = 'done';
      closed = outcome.closed;
      if (operation.wait) {
        const { wait } = operation;
        const row = await waitUntilEffective(operation.name, wait, context, (statement) => run(wait, statement, by, { maxRows: 1 }));
        if (wait.putInContextVar) {
          context[wait.putInContextVar] = row;
          // the rollback may read what the wait found: the journal keeps it as it now resolves
          if (journaled && operation.rollback) await journaled.step(stepOf(operation, index, 'done', report.affectedRows, context, by));
        }
      }
    } catch (error) {
      if (report.status === 'not_run') report.status = 'failed';
      // a database out of reach or out of time: no journal call waits for it too; recovery finishes the run
      const journal = transientFailure(error) ? undefined : journaled;
      if (journal && await journal.takenOver().catch(() => false)) {
        throw new UnavailableError('action_run_taken_over', undefined, { details: { action, run: journal.id }, cause: error });
      }
      if (journal) await journal.setState('compensating').catch(() => undefined);
      const compensations = await compensate(action, plan.operations, reports, context, by, logger, journaled);
      const failure = failureOf(action, operation, error, reports, compensations.statuses, by.fields);
      if (journal) await recordFailure(journal, failure, compensations, logger);
      throw failure;
    }
  }
  const success = successOf(action, reports, context);
  // the answer is kept before it is given: a retry with the same Idempotency-Key gets it, never a second run
  if (journaled && !closed) await journaled.setState('completed', { response: { ok: true, body: success } });
  return success;
}

function successOf(action: string, operations: OperationReport[], context: ContextVariables): ActionSuccess {
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
async function recordFailure(journaled: JournaledRun, failure: ServiceError, compensations: Compensations, logger: Logger): Promise<void> {
  const response = answerOf(failure);
  const { outcome, repair } = compensations;
  try {
    if (outcome === 'needs_attention') journaled.journal.settings.observer?.runNeedsAttention(failure.details?.['action'] as string);
    if (outcome === 'retry') await journaled.setState('compensating', { lease: 0 });
    else await journaled.setState(outcome === 'compensated' ? 'failed' : 'needs_attention', { response, ...(repair === undefined ? {} : { problem: repair }) });
  } catch (error) {
    // the journal's database is down too: the lease lapses and recovery finishes the run
    logger.warn({ run: journaled.id, reason: messageOfError(error) }, 'the end of a failed action run could not be journaled; recovery will finish it');
  }
}

/** Runs one statement of the plan, written as `statement`, as its authorization allows: the pipeline's run stage. */
function run(planned: PlannedActionStatement, statement: BuiltStatement, by: ActionCaller, options: RunOptions): Promise<QueryResult> {
  return runAuthorized(withText(authorizationOf(planned, by), statement), { timeoutMs: by.timeoutMs, signal: by.signal }, options);
}

function authorizationOf(planned: PlannedActionStatement, by: ActionCaller): Authorization {
  const authorization = by.authorizations.get(planned);
  // authorizeActionPlan authorizes every statement of the plan: a missing one is a fault of this module
  if (authorization === undefined) throw new InternalError('operation_failed', 'a statement of the action was not authorized');
  return authorization;
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

/**
 * One operation in its own transaction; resolves with the rows it affected. Journaled: where the journal
 * shares the operation's database, its step is written in the same transaction (both or neither stay);
 * elsewhere, the step is written as started before and done after, so that recovery undoes it either way.
 */
async function runOperation(
  operation: PlannedOperation, position: number, context: ContextVariables, by: ActionCaller, journaled: JournaledRun | undefined,
  closing: ((rows: number) => StoredAnswer) | undefined,
): Promise<{ rows: number; closed: boolean }> {
  const statement = writeStatement(operation, context);
  const shared = journaled !== undefined && journaled.journal.sharesTransactionsWith(operation.target.datasource);
  if (journaled && !shared) {
    await journaled.step(stepOf(operation, position, 'started', 0, context, by));
    journaled.committed();
  }
  const result = await run(operation, statement, by, {
    transaction: true,
    ...(journaled && shared ? { alongside: (transaction, done) => journaled.step(stepOf(operation, position, 'done', done.rowCount, context, by), transaction, closing?.(done.rowCount)) } : {}),
  });
  journaled?.committed();
  if (journaled && !shared) await journaled.step(stepOf(operation, position, 'done', result.rowCount, context, by));
  return { rows: result.rowCount, closed: shared && closing !== undefined };
}

/** The journal's step of an operation: what undoes it, as far as the context resolves its rollback now. */
function stepOf(operation: PlannedOperation, position: number, status: 'started' | 'done', rows: number, context: ContextVariables, by: ActionCaller): StepRecord {
  return { position, name: operation.name, status, rows, compensation: operation.rollback ? compensationOf(operation.rollback, context, by) : null };
}

function compensationOf(rollback: PlannedWrite, context: ContextVariables, by: ActionCaller): StepCompensation {
  let statement: BuiltStatement;
  try {
    statement = writeStatement(rollback, context);
  } catch (error) {
    // a value a later step puts in the context: recorded again once that step has run
    return { unresolved: `the rollback cannot be built yet: ${messageOfError(error)}` };
  }
  const { vdb, grants, datasource } = authorizationOf(rollback, by);
  const role = callerScope(datasource.dialect, vdb, grants, false)?.role ?? null;
  return { datasource: rollback.target.datasource.name, role, sql: statement.sql, bindings: statement.bindings };
}

/** A compensation that failed because its database could not be reached or answer in time may succeed later. */
export function transientFailure(error: unknown): boolean {
  if (error instanceof UnavailableError) return true;
  const { kind } = statementFailure(error);
  return kind === 'unavailable' || kind === 'timeout';
}

function messageOfError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How the compensations of a failed action went; `repair`: the first that cannot succeed, as recovery records one. */
interface Compensations {
  statuses: CompensationStatus[];
  outcome: CompensationOutcome;
  repair?: { operation: string; position: number; compensation: StepCompensation; reason: string };
}

/**
 * Runs the rollbacks of the operations done, last first; returns each operation's compensation status and
 * how they ended. Journaled, each compensation is recorded with it, in its transaction where they share a
 * database, and a step compensated already (by recovery) is not compensated again.
 */
async function compensate(
  action: string, operations: readonly PlannedOperation[], reports: readonly OperationReport[], context: ContextVariables, by: ActionCaller, logger: Logger,
  journaled: JournaledRun | undefined,
): Promise<Compensations> {
  const statuses: CompensationStatus[] = operations.map(() => 'none');
  let outcome: CompensationOutcome = 'compensated';
  let repair: Compensations['repair'];
  for (let index = operations.length - 1; index >= 0; index--) {
    const operation = operations[index] as PlannedOperation;
    if ((reports[index] as OperationReport).status !== 'done' || !operation.rollback) continue;
    let statement: BuiltStatement | undefined;
    const shared = journaled !== undefined && journaled.journal.sharesTransactionsWith(operation.rollback.target.datasource);
    try {
      statement = writeStatement(operation.rollback, context);
      await run(operation.rollback, statement, by, {
        transaction: true,
        ...(journaled && shared ? { alongside: (transaction) => journaled.compensated(index, 'compensated', null, transaction) } : {}),
      });
      if (journaled && !shared) await journaled.compensated(index, 'compensated', null);
      statuses[index] = 'compensated';
    } catch (error) {
      statuses[index] = 'failed';
      if (transientFailure(error)) outcome = 'retry';
      else {
        if (outcome === 'compensated') outcome = 'needs_attention';
        repair ??= { operation: operation.name, position: index, compensation: compensationOf(operation.rollback, context, by), reason: messageOfError(error) };
        if (journaled) await journaled.compensated(index, 'failed', messageOfError(error)).catch(() => undefined);
      }
      // what an operator needs to repair by hand: which write stayed, and the statement that would undo it
      logger.error({
        action, operation: operation.name, entity: operation.rollback.target.entity, datasource: operation.rollback.target.datasource.name,
        rollback: statement ?? null, reason: error instanceof Error ? error.message : String(error),
      }, 'compensation failed: the operation stays applied and must be undone by hand');
    }
  }
  return { statuses, outcome, ...(repair === undefined ? {} : { repair }) };
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
