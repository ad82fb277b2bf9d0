import type { Principal } from '../plugin-api/auth-scheme.js';
import { InputError, InternalError } from '../plugin-api/errors.js';
import { bodyProblems } from './definition-body-schema.js';
import { DefinitionError } from './definition-error.js';
import type { CompiledDefinition, RenderedDefinition } from '../plugin-api/template-engine.js';
import type { VdbHandle } from '../vdb/vdb-handles.js';

/** One call of a query or action endpoint: who calls, with which fields. */
export interface EndpointRequest {
  /** The request body: field name to value. */
  fields: Readonly<Record<string, unknown>>;
  caller: Principal;
  requestId: string;
  /** The time limit of each statement run for the request (`server.requestTimeoutMs`). */
  timeoutMs: number;
  /** The largest result a query answers, as the JSON of its rows (`server.maxResultBytes`). */
  maxResultBytes: number;
  /** Aborted when the client has gone away: its statements are cancelled. */
  signal?: AbortSignal;
}

/** 400 `missing_fields` naming each needed field the body lacks (absent or null). */
export function requireFields(needed: readonly string[], fields: Readonly<Record<string, unknown>>): void {
  const missing = needed.filter((field) => !Object.hasOwn(fields, field) || fields[field] === null || fields[field] === undefined);
  if (missing.length > 0) {
    throw new InputError('missing_fields', `the body lacks needed field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, { details: { missing } });
  }
}

/**
 * Renders a definition for one request and checks the body against its schema. A fault of the definition
 * found only now (a loop that produced a bad body) is the service's error, not the caller's: 500
 * `definition_error` naming the file and line.
 */
export function renderBody(definition: CompiledDefinition, schema: object, handle: VdbHandle, request: EndpointRequest): RenderedDefinition {
  const context = { vdb: handle.vdb.name, requestId: request.requestId, caller: { subject: request.caller.subject }, now: new Date() };
  const rendered = asServiceError(() => definition.render(request.fields, handle.renderContext(context)));
  const problems = bodyProblems(schema, rendered.document);
  if (problems.length > 0) {
    throw new InternalError('definition_error', `${definition.file}: the rendered body is invalid: ${problems.join('; ')}`);
  }
  return rendered;
}

/** Runs `build`, turning a DefinitionError into 500 `definition_error`. */
export function asServiceError<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof DefinitionError) throw new InternalError('definition_error', error.message, { cause: error });
    throw error;
  }
}
