import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ErrorCode } from '../plugin-api/error-catalog.js';
import { ConflictError, InputError, InternalError, LimitError, ServiceError } from '../plugin-api/errors.js';
import { authorizeActionPlan } from './actions/action-authorization.js';
import { executeAction, type ActionSuccess } from './actions/action-execution.js';
import { JournaledRun, type ActionJournals, type EarlierRun } from './actions/action-journal.js';
import { planAction } from './actions/action-plan.js';
import { canonicalJson, sha256Hex } from '../semantic/digests.js';
import { ACTION_BODY_SCHEMA } from './definition-body-schema.js';
import { renderBody, requireFields, type EndpointRequest } from './endpoint-request.js';
import type { ActionBody } from './endpoint-types.js';
import type { CompiledDefinition } from '../plugin-api/template-engine.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';

/** 1 to 255 visible ASCII characters, as Stripe takes them. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/** A registered action definition; `handle` is the VDB its template renders against (`| identifier`). */
export class ActionEndpoint {
  constructor(
    readonly name: string,
    private readonly definition: CompiledDefinition,
    readonly handle: VdbHandle,
    readonly neededFields: readonly string[],
    private readonly handles: VdbHandles,
    private readonly logger: Logger,
    private readonly journals: ActionJournals,
    /** The definition's `description`, for the documents that describe it (OpenAPI, MCP). */
    readonly description?: string,
  ) {}

  /**
   * Renders and plans the action, authorizes every statement as the caller, then runs it, journaled where its
   * database keeps a journal (docs/actions.md). With an `idempotencyKey` (the `Idempotency-Key` header, or an
   * MCP tool's argument), a request the caller sent already answers the first run's answer without running
   * again: 422 `idempotency_key_reused` when the body differs, 409 `idempotency_key_in_flight` while the
   * first still runs.
   */
  async run(request: EndpointRequest, idempotencyKey?: string): Promise<ActionSuccess> {
    if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY.test(idempotencyKey)) {
      throw new InputError('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
    }
    requireFields(this.neededFields, request.fields);
    const rendered = renderBody(this.definition, ACTION_BODY_SCHEMA, this.handle, request);
    const outcome = planAction(rendered.document as ActionBody, rendered.values, request.fields, this.handles);
    if (!outcome.plan) throw new InternalError('definition_error', `${this.definition.file}: ${outcome.problems.map((problem) => problem.message).join('; ')}`);
    const authorizations = authorizeActionPlan(outcome.plan, request.caller);
    const by = { authorizations, timeoutMs: request.timeoutMs, signal: request.signal, fields: request.fields };
    const first = outcome.plan.operations[0];
    const journal = first && this.journals.for(first.target.datasource);
    if (!journal) {
      if (idempotencyKey !== undefined) throw new InputError('invalid_idempotency_key', `action ${this.name}: its datasource keeps no journal, so it cannot take an Idempotency-Key`);
      return executeAction(this.name, outcome.plan, by, this.logger);
    }
    const id = randomUUID();
    // a key is the caller's own: another caller's identical key is another request; kept as a digest of fixed size
    const key = idempotencyKey === undefined ? undefined : createHash('sha256').update(`${request.caller.subject}\u0000${idempotencyKey}`).digest('hex');
    // canonical JSON: the same fields in another order are the same request
    const hash = sha256Hex(canonicalJson([this.name, request.fields]));
    // with a key, the run is opened before anything runs, to find an earlier one; otherwise its first step opens it
    let run: JournaledRun;
    if (key === undefined) run = new JournaledRun(journal, id, { action: this.name, request: { ...request.fields }, hash });
    else {
      const earlier = await journal.begin(id, this.name, { ...request.fields }, key, hash);
      if (earlier) return replay(earlier, hash);
      run = new JournaledRun(journal, id, undefined);
    }
    const heartbeat = setInterval(() => {
      run.renew().catch((error: unknown) => this.logger.warn({ run: id, reason: error instanceof Error ? error.message : String(error) }, 'the lease of an action run could not be renewed'));
    }, (journal.settings.leaseSeconds * 1000) / 3);
    heartbeat.unref();
    try {
      return await executeAction(this.name, outcome.plan, by, this.logger, run);
    } finally {
      clearInterval(heartbeat);
    }
  }
}

/** A retried request: the first run's answer, or why there is none to give. */
function replay(earlier: EarlierRun, hash: string): ActionSuccess {
  if (earlier.hash !== hash) {
    throw new LimitError('idempotency_key_reused', 'this Idempotency-Key was used with another body or action; use a new key for a new request', { details: { run: earlier.run } });
  }
  const answer = earlier.response;
  if (!answer) throw new ConflictError('idempotency_key_in_flight', undefined, { details: { run: earlier.run, state: earlier.state } });
  if (answer.ok) return answer.body as ActionSuccess;
  throw new ReplayedError(answer.code as ErrorCode, answer.message, { details: answer.details ?? {} });
}

/** The first run's error, answered again with its code (and so its status), message and details. */
class ReplayedError extends ServiceError {}
