import {
  executeNodeSynchronously,
  type TwingBaseNode, type TwingSynchronousExecutionContext, type TwingSynchronousNodeExecutor,
} from 'twing';
import type { ActiveRender } from './render-state.js';
import { isTrustedText, trustTemplateOutput } from './trusted-text.js';

/** The filter whose result is its operand or null: over a literal, the result is still the author's text. */
export const SEPARATOR_FILTER = 'filterValWhenVarFalse';

/**
 * The node executor that makes every value bound by construction. Every `{{ expr }}` (a print node, escaped or
 * not, in the body, a macro or a block) prints either
 * - trusted text: a markup made by `| identifier`, `| raw` or by the template's own output;
 * - a literal, decided from the node tree, never from the value: the author's text is text;
 * - otherwise a placeholder, and the value is captured with its type (objects from twing hashes as plain
 *   objects). So a request value never reaches the text.
 */
export function createBoundValueExecutor(active: ActiveRender): TwingSynchronousNodeExecutor {
  const execute: TwingSynchronousNodeExecutor = (node, context) => {
    switch (node.type) {
      case 'print':
        return print(node, context);
      case 'set':
        return (node.attributes as { captures?: boolean }).captures ? captureAsTemplateOutput(node, context) : executeNodeSynchronously(node, context);
      case 'name':
        return variable(node, context);
      case 'method_call': // a macro call
      case 'block_function':
        return trustTemplateOutput(executeNodeSynchronously(node, context));
      default:
        return executeNodeSynchronously(node, context);
    }
  };

  const variable = (node: TwingBaseNode, context: TwingSynchronousExecutionContext): unknown => {
    const { name, isAlwaysDefined, shouldTestExistence } = node.attributes as { name: string; isAlwaysDefined?: boolean; shouldTestExistence?: boolean };
    // twing's `_context` is the whole variable map; in a definition it is the request context
    if (name === '_context') return active.state.context._context;
    if (isAlwaysDefined || shouldTestExistence || name === '_self' || name === '_charset') return executeNodeSynchronously(node, context);
    return readVariable(context.context, context.environment.globals, name);
  };

  const print = (node: TwingBaseNode, context: TwingSynchronousExecutionContext): void => {
    const expression = withoutSqlEscape(node.children['expression'] as TwingBaseNode);
    const value: unknown = execute(expression, context);
    let text: string;
    if (isTrustedText(value)) text = value.content;
    else if (isLiteral(expression)) text = value === null || value === undefined ? '' : String(value);
    else text = active.state.bind(plainValue(value), node.line);
    context.outputBuffer.echo(text);
  };

  // `{% set x %}...{% endset %}` holds template output (text and placeholders): printing it again is safe.
  const captureAsTemplateOutput = (node: TwingBaseNode, context: TwingSynchronousExecutionContext): void => {
    const names = execute(node.children['names'] as TwingBaseNode, context) as string[];
    context.outputBuffer.start();
    execute(node.children['values'] as TwingBaseNode, context);
    const captured = trustTemplateOutput(context.outputBuffer.getAndClean());
    for (const name of names) context.context.set(name, captured);
  };

  return execute;
}

/** twing's context or the environment's globals. */
export interface VariableMap {
  has(name: string): boolean;
  get(name: string): unknown;
}

/**
 * A variable as a definition reads it: the request field, else twing's global of that name, else null.
 * twing's own lookup copies the whole context on every read; without strict mode this is all it does.
 */
export function readVariable(variables: VariableMap, globals: VariableMap, name: string): unknown {
  if (variables.has(name)) return variables.get(name);
  return globals.has(name) ? globals.get(name) : null;
}

/** The autoescape visitor wraps unsafe expressions in an `sql` escape node: the executor replaces it. */
function withoutSqlEscape(expression: TwingBaseNode): TwingBaseNode {
  return expression.type === 'escape' && (expression.attributes as { strategy?: string }).strategy === 'sql'
    ? (expression.children['body'] as TwingBaseNode)
    : expression;
}

const literalNodes = new WeakMap<TwingBaseNode, boolean>();

/** A constant, a concatenation or choice of literals, or the separator filter over a literal. */
function isLiteral(node: TwingBaseNode): boolean {
  let literal = literalNodes.get(node);
  if (literal === undefined) {
    const child = (name: string) => isLiteral(node.children[name] as TwingBaseNode);
    switch (node.type) {
      case 'constant':
        literal = true;
        break;
      case 'concatenate':
        literal = child('left') && child('right');
        break;
      case 'conditional':
        literal = child('expr2') && child('expr3');
        break;
      case 'filter':
        literal = (node.attributes as { operatorName?: string }).operatorName === SEPARATOR_FILTER && child('operand');
        break;
      default:
        literal = false;
    }
    literalNodes.set(node, literal);
  }
  return literal;
}

const MAX_HASH_DEPTH = 64;

/**
 * A bound value is plain data, as from a JSON body: twing builds hashes as Maps, and a missing attribute is
 * undefined where a missing variable is null.
 */
export function plainValue(value: unknown, depth = 0): unknown {
  if (value === undefined) return null;
  if (depth > MAX_HASH_DEPTH) throw new RangeError(`a bound value nests deeper than ${MAX_HASH_DEPTH} levels`);
  if (value instanceof Map) {
    return Object.fromEntries([...value].map(([key, item]) => [String(key), plainValue(item, depth + 1)]));
  }
  if (Array.isArray(value) && value.some((item) => item instanceof Map || Array.isArray(item))) {
    return value.map((item) => plainValue(item, depth + 1));
  }
  return value;
}
