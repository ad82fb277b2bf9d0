import { InputError } from '../plugin-api/errors.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';

/** The trusted part of a task request body (docs/tasks.md); caller or role fields are ignored. */
export interface TaskRequest {
  goal: string;
  externalContextId: string | null;
  externalContext: JsonValue | null;
  artifactIds: string[];
}

/** Limits of a task request, exported for the OpenAPI document to state them. */
export const MAX_GOAL_LENGTH = 16_384;
/** Of `externalContextId` and of each artifact id. */
export const MAX_ID_LENGTH = 512;
export const MAX_ARTIFACT_IDS = 100;

/** Reads a task request; 400 `invalid_goal` or `invalid_request` naming the field at fault. */
export function readTaskRequest(body: unknown): TaskRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new InputError('invalid_request', 'the body must be a JSON object with a goal');
  }
  const fields = body as Record<string, unknown>;
  const goal = fields['goal'];
  if (typeof goal !== 'string' || goal.trim() === '') throw new InputError('invalid_goal', 'goal must be a non-empty string');
  if (goal.length > MAX_GOAL_LENGTH) throw new InputError('invalid_goal', `goal must be at most ${MAX_GOAL_LENGTH} characters`);
  const externalContextId = fields['externalContextId'] ?? null;
  if (externalContextId !== null && (typeof externalContextId !== 'string' || externalContextId.length > MAX_ID_LENGTH)) {
    throw new InputError('invalid_request', `externalContextId must be a string of at most ${MAX_ID_LENGTH} characters`);
  }
  const artifactIds = fields['artifactIds'] ?? [];
  if (!Array.isArray(artifactIds) || artifactIds.length > MAX_ARTIFACT_IDS
    || !artifactIds.every((id) => typeof id === 'string' && id !== '' && id.length <= MAX_ID_LENGTH)) {
    throw new InputError('invalid_request', `artifactIds must be a list of at most ${MAX_ARTIFACT_IDS} non-empty strings`);
  }
  return { goal, externalContextId, externalContext: (fields['externalContext'] ?? null) as JsonValue | null, artifactIds: artifactIds as string[] };
}
