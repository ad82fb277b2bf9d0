/**
 * The documents the reference runtime receives, checked against the protocol's JSON Schemas
 * (docs/runtime/): the runtime side of "validated on both sides".
 */
import { InputError, validateRuntimeDocument, type TaskAdvanceDocument, type TaskStartDocument } from '../../core/plugin-api/index.js';

function checked<T>(kind: 'service-task-start' | 'service-task-advance', body: unknown): T {
  const problems = validateRuntimeDocument(kind, body);
  if (problems.length > 0) throw new InputError('invalid_document', `not a valid ${kind}: ${problems.slice(0, 5).join('; ')}`);
  return body as T;
}

export function asStartDocument(body: unknown): TaskStartDocument {
  return checked('service-task-start', body);
}

export function asAdvanceDocument(body: unknown): TaskAdvanceDocument {
  return checked('service-task-advance', body);
}
