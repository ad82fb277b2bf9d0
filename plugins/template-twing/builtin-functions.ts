import { randomUUID } from 'node:crypto';
import {
  createSynchronousFilter, createSynchronousFunction,
  type TwingSynchronousEnvironment, type TwingSynchronousExecutionContext,
} from 'twing';
import { parseBoundedYaml, DeferredValue, InputError } from '../../core/plugin-api/index.js';
import { SEPARATOR_FILTER } from './bound-value-executor.js';
import type { ActiveRender } from './render-state.js';
import { isTrustedText, trustedText } from './trusted-text.js';

/**
 * twing built-ins that would let a value become text (markup-returning filters) or load other templates.
 * Without them a definition that names one fails to compile with "Unknown filter/function".
 */
const WITHDRAWN_FILTERS = ['escape', 'e', 'nl2br', 'spaceless'];
const WITHDRAWN_FUNCTIONS = ['include', 'source', 'template_from_string', 'dump', 'constant'];

/** The built-in functions of docs/endpoints.md, plus the `identifier` and `raw` filters. */
export function installBuiltins(environment: TwingSynchronousEnvironment, active: ActiveRender): void {
  for (const name of WITHDRAWN_FILTERS) environment.filters.delete(name);
  for (const name of WITHDRAWN_FUNCTIONS) environment.functions.delete(name);
  environment.addFilter(createSynchronousFilter(SEPARATOR_FILTER, filterValWhenVarFalse, [{ name: 'var' }, { name: 'flip', defaultValue: false }]));
  environment.addFilter(createSynchronousFilter('identifier', (_execution, name: unknown) => trustedText(active.state.context.identifier(String(name ?? ''))), []));
  environment.addFilter(createSynchronousFilter('raw', (_execution, text: unknown) => (isTrustedText(text) ? text : trustedText(String(text ?? ''))), []));
  environment.addFunction(createSynchronousFunction('uuid', () => randomUUID(), []));
  environment.addFunction(createSynchronousFunction('fromYamlArrayToIterable', (_execution, items: unknown) => iterableFrom(items), [{ name: 'array' }]));
  environment.addFunction(createSynchronousFunction('deferValueProcessing', (_execution, contextVar: unknown) => new DeferredValue(contextVar as string), [{ name: 'contextVar' }]));
}

/**
 * `{{ sep | filterValWhenVarFalse('notFirst', true) }}`: null while the context variable is false (or null,
 * or absent), else the filtered value. With `flip`, a false variable is set to true after the call. It is
 * not a toggle ("flipped on each call"): a toggle would drop every other separator of a loop, so the
 * flip goes one way: the separator is omitted before the first item only. Reset the variable before a
 * second loop.
 */
function filterValWhenVarFalse(execution: TwingSynchronousExecutionContext, value: unknown, variable: unknown, flip: unknown): unknown {
  if (typeof variable !== 'string') throw new TypeError(`${SEPARATOR_FILTER}: the variable name must be a string`);
  const current: unknown = execution.context.get(variable);
  const isFalse = current === false || current === null || current === undefined;
  if (isFalse && flip === true) execution.context.set(variable, true);
  return isFalse ? null : value;
}

/**
 * An array as it is; the YAML text of an array parsed with the service's bounds; null or absent as no items.
 * Anything else is a bad request: the argument is nearly always a request field.
 */
function iterableFrom(items: unknown): unknown[] {
  if (Array.isArray(items)) return items;
  if (items === null || items === undefined) return [];
  if (typeof items === 'string') {
    const parsed = parseBoundedYaml(items);
    if (parsed.ok && (Array.isArray(parsed.value) || parsed.value === null)) return (parsed.value as unknown[] | null) ?? [];
    const reason = parsed.ok ? 'the YAML text is not an array' : `invalid YAML: ${parsed.message}`;
    throw new InputError('invalid_body', `fromYamlArrayToIterable: ${reason}`);
  }
  throw new InputError('invalid_body', `fromYamlArrayToIterable: expected an array or the YAML text of one, got ${typeof items}`);
}
