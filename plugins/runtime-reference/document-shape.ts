/**
 * A light structural check of the documents the standalone runtime receives: enough that the runtime never
 * reads a field that is not there. The full contract is the JSON Schemas in docs/runtime/.
 */
import { InputError } from '../../core/errors.js';
import type { TaskAdvanceDocument, TaskStartDocument } from '../../core/tasks/task-documents.js';

type Check = [path: string, holds: boolean];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** `semantic` is null or holds the three lists the planner reads. */
function isContext(value: unknown): boolean {
  if (!isObject(value) || !isObject(value['vdb']) || typeof value['access'] !== 'string') return false;
  const semantic = value['semantic'];
  return semantic === null || (isObject(semantic) && ['datasets', 'relationships', 'metrics'].every((key) => Array.isArray(semantic[key])));
}

function isObservation(value: unknown): boolean {
  if (!isObject(value)) return false;
  const error = value['error'];
  return isString(value['actionId'])
    && ['ok', 'denied', 'failed'].includes(value['status'] as string)
    && Array.isArray(value['columns']) && Array.isArray(value['rows'])
    && Number.isInteger(value['rowCount']) && typeof value['truncated'] === 'boolean'
    && (error === null || (isObject(error) && typeof error['code'] === 'string' && typeof error['message'] === 'string'));
}

function assertHolds(document: string, checks: Check[]): void {
  const wrong = checks.filter(([, holds]) => !holds).map(([path]) => path);
  if (wrong.length > 0) throw new InputError('invalid_document', `not a valid ${document}: wrong or missing ${wrong.join(', ')}`);
}

export function asStartDocument(body: unknown): TaskStartDocument {
  if (!isObject(body)) throw new InputError('invalid_document', 'not a valid service-task-start: the body is no JSON object');
  const { vdb, budgets } = body;
  assertHolds('service-task-start', [
    ['format', body['format'] === 'service-task-start'],
    ['formatVersion', body['formatVersion'] === 1],
    ['taskId', isString(body['taskId'])],
    ['instanceId', isString(body['instanceId'])],
    ['capability', isString(body['capability'])],
    ['vdb', isObject(vdb) && isString(vdb['name']) && isString(vdb['version'])],
    ['goal', typeof body['goal'] === 'string'],
    ['authorizedContext', isContext(body['authorizedContext'])],
    ['budgets', isObject(budgets) && Number.isInteger(budgets['maxObservationRows'])],
  ]);
  return body as unknown as TaskStartDocument;
}

export function asAdvanceDocument(body: unknown): TaskAdvanceDocument {
  if (!isObject(body)) throw new InputError('invalid_document', 'not a valid service-task-advance: the body is no JSON object');
  const observations = body['observations'];
  assertHolds('service-task-advance', [
    ['format', body['format'] === 'service-task-advance'],
    ['formatVersion', body['formatVersion'] === 1],
    ['taskId', isString(body['taskId'])],
    ['sequence', Number.isInteger(body['sequence']) && (body['sequence'] as number) >= 1],
    ['observations', Array.isArray(observations) && observations.every(isObservation)],
  ]);
  return body as unknown as TaskAdvanceDocument;
}
