import type { Logger } from 'pino';
import { InternalError } from '../plugin-api/errors.js';
import { authorizeActionPlan } from './actions/action-authorization.js';
import { executeAction, type ActionSuccess } from './actions/action-execution.js';
import { planAction } from './actions/action-plan.js';
import { ACTION_BODY_SCHEMA } from './definition-body-schema.js';
import { renderBody, requireFields, type EndpointRequest } from './endpoint-request.js';
import type { ActionBody } from './endpoint-types.js';
import type { CompiledDefinition } from '../plugin-api/template-engine.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';

/** A registered action definition; `handle` is the VDB its template renders against (`| identifier`). */
export class ActionEndpoint {
  constructor(
    readonly name: string,
    private readonly definition: CompiledDefinition,
    readonly handle: VdbHandle,
    readonly neededFields: readonly string[],
    private readonly handles: VdbHandles,
    private readonly logger: Logger,
    /** The definition's `description`, for the documents that describe it (OpenAPI, MCP). */
    readonly description?: string,
  ) {}

  /** Renders and plans the action, authorizes every statement as the caller, then runs it. */
  async run(request: EndpointRequest): Promise<ActionSuccess> {
    requireFields(this.neededFields, request.fields);
    const rendered = renderBody(this.definition, ACTION_BODY_SCHEMA, this.handle, request);
    const outcome = planAction(rendered.document as ActionBody, rendered.values, request.fields, this.handles);
    if (!outcome.plan) throw new InternalError('definition_error', `${this.definition.file}: ${outcome.problems.map((problem) => problem.message).join('; ')}`);
    const authorizations = authorizeActionPlan(outcome.plan, request.caller);
    return executeAction(this.name, outcome.plan, { authorizations, timeoutMs: request.timeoutMs, signal: request.signal, fields: request.fields }, this.logger);
  }
}
