import { InternalError } from '../plugin-api/errors.js';
import { DeferredValue } from './deferred-value.js';

/**
 * A captured value as a SQL binding. Objects and arrays are bound as their JSON text: drivers would
 * otherwise expand them differently (mysql2 turns an object into `a = 1, b = 2`, pg an array into an array
 * literal), and a value must mean the same on every backend. Read them with the dialect's JSON functions.
 */
export function sqlBinding(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (value instanceof DeferredValue) {
    throw new InternalError('definition_error', `deferValueProcessing(contextVar='${value.contextVar}') only resolves in action operations`);
  }
  if (value instanceof Date || typeof value !== 'object') return value;
  return JSON.stringify(value);
}
