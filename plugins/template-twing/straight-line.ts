import { getChildrenCount, type TwingBaseNode, type TwingTemplateNode } from 'twing';
import { plainValue, readVariable, type VariableMap } from './bound-value-executor.js';
import { PROVIDED_NAMES } from './definition-inspection.js';
import { isTrustedText } from './trusted-text.js';

/** Names a print may read that twing or the engine give a meaning of their own (`_charset` too, to the bound-value executor). */
const SPECIAL_NAMES = new Set([...PROVIDED_NAMES, '_charset']);

/**
 * The variables a straight-line definition binds, in the order it prints them; undefined for any other.
 *
 * Straight-line: text, comments, and prints of a literal or of a plain variable, nothing else (no tag, no
 * filter, no function, no test, no macro or block). The bound-value executor turns every printed variable
 * into a placeholder whatever its value, so such a definition renders the same text for every request:
 * a render after the first need only read the variables again (TwingCompiledDefinition.render, twing-template-engine.ts). Anything that
 * could make the text depend on a value (`{% if %}`, `{% for %}`, `| length`, a function) leaves the
 * definition to twing on every render.
 */
export function straightLineVariables(ast: TwingTemplateNode): string[] | undefined {
  const { body, blocks, macros, traits, parent } = ast.children as Record<string, TwingBaseNode | undefined>;
  if (parent || !body || [blocks, macros, traits].some((node) => node !== undefined && getChildrenCount(node) > 0)) return undefined;
  const names: string[] = [];
  const visit = (node: TwingBaseNode): boolean => {
    switch (node.type) {
      case null:
        return Object.values(node.children).every(visit);
      case 'text':
      case 'comment':
        return true;
      case 'print': {
        const expression = printedExpression(node.children['expression'] as TwingBaseNode);
        if (isConstant(expression)) return true;
        const name = plainVariable(expression);
        if (name === undefined) return false;
        names.push(name);
        return true;
      }
      default:
        return false;
    }
  };
  return visit(body) ? names : undefined;
}

/** A print's expression without the wrappers twing adds around every print (escaping, the to-string check). */
function printedExpression(expression: TwingBaseNode): TwingBaseNode {
  let node = expression;
  if (node.type === 'escape' && (node.attributes as { strategy?: unknown }).strategy === 'sql') node = node.children['body'] as TwingBaseNode;
  if (node.type === 'check_to_string') node = node.children['value'] as TwingBaseNode;
  return node;
}

/** The author's text: a constant, or constants joined with `~` (a conditional between literals is not: its test reads a value). */
function isConstant(node: TwingBaseNode): boolean {
  if (node.type === 'constant') return true;
  return node.type === 'concatenate' && isConstant(node.children['left'] as TwingBaseNode) && isConstant(node.children['right'] as TwingBaseNode);
}

function plainVariable(node: TwingBaseNode): string | undefined {
  if (node.type !== 'name') return undefined;
  const { name, isAlwaysDefined, shouldTestExistence } = node.attributes as { name?: unknown; isAlwaysDefined?: unknown; shouldTestExistence?: unknown };
  if (typeof name !== 'string' || isAlwaysDefined === true || shouldTestExistence === true || SPECIAL_NAMES.has(name)) return undefined;
  return name;
}

const EMPTY: VariableMap = new Map<string, unknown>();

/** The first render of a straight-line definition: what every later render returns, with new values. */
export interface FirstRender {
  document: unknown;
  /** The definition line of each bound value, in placeholder order. */
  lines: readonly number[];
}

/**
 * The values a straight-line definition binds for `fields`, as its render would capture them; undefined
 * when one of them is text the template would splice rather than bind (a trusted global), which only a
 * full render handles.
 */
export function straightLineValues(
  names: readonly string[], fields: Readonly<Record<string, unknown>>, globals: VariableMap,
): unknown[] | undefined {
  const values = new Array<unknown>(names.length);
  for (let index = 0; index < names.length; index++) {
    const name = names[index] as string;
    const value = Object.hasOwn(fields, name) ? fields[name] : readVariable(EMPTY, globals, name);
    if (isTrustedText(value)) return undefined;
    values[index] = plainValue(value);
  }
  return values;
}
