import { getChildrenCount, type TwingBaseNode, type TwingTemplateNode } from 'twing';
import { DeferredValue, DefinitionError, type StartupProblem } from '../../core/plugin-api/index.js';

export interface DefinitionInspection {
  warnings: StartupProblem[];
  /** Names the template reads, minus the ones it assigns itself (loop targets, `set`, macro arguments). */
  variables: string[];
}

/** Names twing or the engine provide; they are not request fields. */
export const PROVIDED_NAMES: ReadonlySet<string> = new Set(['_self', '_context', '_parent', '_seq', '_key', 'loop', 'varargs']);

/**
 * Checks a parsed definition and reports what `validate` shows. A definition is self-contained: it may not
 * include, embed, extend, use or import other templates (macros of `_self` are fine).
 * @throws DefinitionError at the line of the first forbidden construct.
 */
export function inspectDefinition(ast: TwingTemplateNode, file: string, separatorLine: number): DefinitionInspection {
  const fail: Fail = (node, message, remediation, line = node.line) => {
    throw new DefinitionError({ file, line, message, remediation });
  };
  checkHeaderOutput(ast.children.body, separatorLine, fail);
  const { parent, traits } = ast.children as { parent?: TwingBaseNode; traits: TwingBaseNode };
  if (parent) fail(parent, '{% extends %} is not available: a definition is self-contained');
  if (getChildrenCount(traits) > 0) fail(ast, '{% use %} is not available: a definition is self-contained');

  const warnings: StartupProblem[] = [];
  const read = new Set<string>();
  const assigned = new Set<string>();
  const visit = (node: TwingBaseNode): void => {
    const attributes = node.attributes as { name?: unknown; operatorName?: unknown };
    switch (node.type) {
      case 'include':
      case 'embed':
        fail(node, `{% ${node.type} %} is not available: a definition is self-contained`);
        break;
      case 'import': {
        const template = node.children['templateName'] as TwingBaseNode;
        if (template.type !== 'name' || (template.attributes as { name?: unknown }).name !== '_self') {
          fail(node, 'only macros of the definition itself can be imported', 'write {% import _self as m %}');
        }
        break;
      }
      case 'name':
        read.add(String(attributes.name));
        break;
      case 'assignment':
        assigned.add(String(attributes.name));
        break;
      case 'macro':
        for (const name of macroArgumentNames(node)) assigned.add(name);
        break;
      case 'filter':
        if (attributes.operatorName === 'raw') {
          warnings.push({ file, line: node.line, message: '| raw splices text unchecked: it must never carry request data', severity: 'warning' });
        }
        break;
      case 'function':
        if (attributes.operatorName === 'deferValueProcessing') checkDeferredPath(node, fail);
        break;
    }
    for (const child of Object.values(node.children)) visit(child);
  };
  visit(ast);
  const variables = [...read].filter((name) => !assigned.has(name) && !PROVIDED_NAMES.has(name)).sort();
  return { warnings, variables };
}

type Fail = (node: TwingBaseNode, message: string, remediation?: string, line?: number) => never;

/**
 * The header sets variables: text or `{{ }}` printed there would land in the YAML body. Macros and blocks
 * live outside the body node, and a captured `{% set %}` prints nothing, so neither is checked.
 */
function checkHeaderOutput(node: TwingBaseNode, separatorLine: number, fail: Fail): void {
  if (node.line >= separatorLine) return;
  const refuse = (line: number) => fail(node, 'the header holds template statements only ({% ... %})', 'move text and {{ }} expressions below the --- line', line);
  if (node.type === 'print' || node.type === 'block_reference') refuse(node.line);
  if (node.type === 'text' || node.type === 'verbatim') {
    const headerLines = String((node.attributes as { data?: unknown }).data).split('\n').slice(0, separatorLine - node.line);
    const text = headerLines.findIndex((line) => line.trim() !== '');
    if (text >= 0) refuse(node.line + text);
  }
  if (node.type === 'set' && (node.attributes as { captures?: boolean }).captures) return;
  for (const child of Object.values(node.children)) checkHeaderOutput(child, separatorLine, fail);
}

/** Macro arguments are an array node of name/default pairs: even positions hold the names. */
function macroArgumentNames(macro: TwingBaseNode): string[] {
  const pairs = Object.values((macro.children['arguments'] as TwingBaseNode).children);
  return pairs.filter((_pair, index) => index % 2 === 0).map((name) => String((name.attributes as { value?: unknown }).value));
}

/** The path must be written literally: it names a context variable of the action, not request data. */
function checkDeferredPath(node: TwingBaseNode, fail: Fail): void {
  // call arguments are an array node of key/value pairs: 0 → key, 1 → value
  const path = (node.children['arguments'] as TwingBaseNode).children['1'];
  const value = path?.type === 'constant' ? (path.attributes as { value?: unknown }).value : undefined;
  if (!DeferredValue.isValidPath(value)) {
    fail(node, 'deferValueProcessing needs a literal path', "write deferValueProcessing(contextVar='<variable>.<field>')");
  }
}
