import { ERROR_CATALOG, type ErrorCode, type ErrorEnvelope, type ErrorStatus } from '../../plugin-api/error-catalog.js';
import { taskErrorSchema } from './task-schemas.js';
import type { ApiResponse, JsonSchema } from './openapi-types.js';

/** The errors an operation answers, by envelope: the Task API's own, and the standard one. */
export interface OperationErrors {
  standard?: readonly ErrorCode[];
  task?: readonly ErrorCode[];
}

const SCHEMA_NAMES: Record<ErrorEnvelope, string> = { standard: 'Error', task: 'TaskError' };

const ALL_CODES = Object.keys(ERROR_CATALOG) as ErrorCode[];

/** The codes a status is answered with in an envelope, in error catalog order. */
function codesOf(status: ErrorStatus, envelope: ErrorEnvelope): ErrorCode[] {
  return ALL_CODES.filter((code) => ERROR_CATALOG[code].status === status && ERROR_CATALOG[code].envelopes.includes(envelope));
}

/** What a missing or refused credential answers (the codes of every scheme: the error catalog does not say whose). */
export const CREDENTIAL_ERRORS: readonly ErrorCode[] = codesOf(401, 'standard');
/** What reading a JSON or YAML body can answer. */
export const BODY_ERRORS: readonly ErrorCode[] = ['invalid_body', 'body_too_large', 'unsupported_media_type'];

/**
 * The error responses of an operation, one per status, each naming its codes with their meaning from the
 * error catalog (core/plugin-api/error-catalog.ts) and an example body per code. A code of the shared
 * request handling listed for the task envelope is given in the Task API's spelling
 * (`credentials_missing` is `unauthenticated` there). `internal_error` is always added, in the envelope
 * the route answers in (the task one when listed; errors before routing, such as `startup_blocked`, are standard).
 * @throws Error when a code is not answered in the envelope it is listed for: the description is wrong.
 */
export function errorResponses(errors: OperationErrors): Record<string, ApiResponse> {
  const byStatus = new Map<number, { envelope: ErrorEnvelope; code: ErrorCode }[]>();
  const routeEnvelope: ErrorEnvelope = errors.task ? 'task' : 'standard';
  for (const envelope of ['standard', 'task'] as const) {
    const listed = [...(errors[envelope] ?? []), ...(envelope === routeEnvelope ? ['internal_error' as const] : [])];
    for (const code of new Set(listed.map((given) => spelledIn(envelope, given)))) {
      const status = ERROR_CATALOG[code].status;
      const entries = byStatus.get(status) ?? [];
      byStatus.set(status, [...entries, { envelope, code }]);
    }
  }
  return Object.fromEntries([...byStatus.entries()].sort(([a], [b]) => a - b).map(([status, entries]) => [String(status), responseOf(entries)]));
}

function spelledIn(envelope: ErrorEnvelope, code: ErrorCode): ErrorCode {
  const spelled = envelope === 'task' ? (ERROR_CATALOG[code].inTaskEnvelope?.code ?? code) : code;
  if (!ERROR_CATALOG[spelled].envelopes.includes(envelope)) throw new Error(`error code ${spelled} is not answered in the ${envelope} envelope`);
  return spelled;
}

function responseOf(entries: readonly { envelope: ErrorEnvelope; code: ErrorCode }[]): ApiResponse {
  const envelopes = [...new Set(entries.map((entry) => entry.envelope))];
  const refs = envelopes.map((envelope) => ({ $ref: `#/components/schemas/${SCHEMA_NAMES[envelope]}` }));
  return {
    description: entries.map(({ code, envelope }) => `\`${code}\`${envelopes.length > 1 ? ` (${envelope} envelope)` : ''}: ${ERROR_CATALOG[code].meaning}`).join('\n\n'),
    content: {
      'application/json': {
        schema: refs.length === 1 ? (refs[0] as JsonSchema) : { oneOf: refs },
        examples: Object.fromEntries(entries.map(({ code, envelope }) => [code, { summary: ERROR_CATALOG[code].message, value: exampleBody(envelope, code) }])),
      },
    },
  };
}

function exampleBody(envelope: ErrorEnvelope, code: ErrorCode): object {
  const { message, retryable } = ERROR_CATALOG[code];
  return envelope === 'task' ? { format: 'service-task-error', formatVersion: 1, code, message, retryable } : { code, message, details: {} };
}

/** The component schemas of both error envelopes, each with the codes answered in it. */
export function errorSchemas(): Record<string, JsonSchema> {
  const codesIn = (envelope: ErrorEnvelope) => ALL_CODES.filter((code) => ERROR_CATALOG[code].envelopes.includes(envelope));
  return {
    [SCHEMA_NAMES.standard]: {
      type: 'object',
      description: 'The standard error body of every route but the Task API (docs/errors.md).',
      additionalProperties: false,
      required: ['code', 'message', 'details'],
      properties: {
        code: { enum: codesIn('standard'), description: 'Stable machine code from the error catalog.' },
        message: { type: 'string', description: 'One line for a person; never a stack or a credential.' },
        details: {
          type: 'object',
          description: 'Machine-readable facts, e.g. `missing` (missing_fields), `denial` and `resource` (forbidden), `operations` (operation_conflict).',
        },
      },
    },
    [SCHEMA_NAMES.task]: taskErrorSchema(codesIn('task')),
  };
}
