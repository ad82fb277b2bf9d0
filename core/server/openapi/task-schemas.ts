import { readFileSync } from 'node:fs';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import { MAX_ARTIFACT_IDS, MAX_GOAL_LENGTH, MAX_ID_LENGTH } from '../../tasks/task-request.js';
import type { JsonSchema } from './openapi-types.js';

/**
 * The published JSON Schema of a runtime document (docs/runtime/), as the document embeds it: the files a
 * runtime author reads are the contract, so they are not restated. Their `$id` and `$schema` go: an `$id`
 * would make a reader resolve references against another host.
 */
function runtimeSchema(kind: 'service-task-snapshot' | 'service-task-error'): Record<string, unknown> {
  // dist/core/server/openapi -> the project root, where docs/ ships beside dist/
  const file = new URL(`../../../../docs/runtime/${kind}.schema.json`, import.meta.url);
  const { $id: _id, $schema: _schema, ...schema } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  return schema;
}

/** The snapshot a task route answers (its terminal form: `stop` set, no pending actions). */
export function taskSnapshotSchema(): JsonSchema {
  return runtimeSchema('service-task-snapshot');
}

/** The Task API's error envelope, its `code` narrowed to the codes answered in it. */
export function taskErrorSchema(codes: readonly ErrorCode[]): JsonSchema {
  const schema = runtimeSchema('service-task-error');
  const properties = schema['properties'] as Record<string, Record<string, unknown>>;
  return { ...schema, properties: { ...properties, code: { ...properties['code'], enum: codes } } };
}

/** The body of a task route (core/tasks/task-request.ts reads it). */
export const TASK_REQUEST_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['goal'],
  description: 'Any other field, such as a caller or roles, is ignored: identity comes only from authentication.',
  properties: {
    goal: { type: 'string', minLength: 1, maxLength: MAX_GOAL_LENGTH, description: 'The question or job for the agent runtime.' },
    externalContextId: { type: ['string', 'null'], maxLength: MAX_ID_LENGTH, description: 'An id of the caller\'s own, passed to the runtime.' },
    externalContext: { description: 'Any JSON; reaches the runtime as `{contentType: application/json, data}`.' },
    artifactIds: {
      type: 'array', maxItems: MAX_ARTIFACT_IDS, items: { type: 'string', minLength: 1, maxLength: MAX_ID_LENGTH },
      description: 'Ids of artifacts the runtime may use, passed unchanged.',
    },
  },
  examples: [{ goal: 'revenue by region' }],
};
