import { DefinitionError } from '../../../core/endpoints/definition-error.js';
import type { CompiledDefinition, RenderContext, RenderedDefinition } from '../../../core/plugin-api/template-engine.js';
import { stringFunctions } from '../../../plugins/functions-strings/string-functions.js';
import { createTwingTemplateEngine } from '../../../plugins/template-twing/twing-template-engine.js';

export const engine = createTwingTemplateEngine('twing');
export const stringsModule = { module: 'strings', functions: stringFunctions };

/** Quotes like PostgreSQL and knows the tables `orders`, `order_lines` and `customers`. */
export function renderContext(known = ['orders', 'order_lines', 'customers']): RenderContext {
  return {
    _context: { vdb: 'retail', requestId: 'req-1', caller: { subject: 'alice' }, now: new Date('2026-01-02T03:04:05Z') },
    identifier: (name) => {
      if (!known.includes(name)) throw new RangeError(`unknown relation "${name}"`);
      return `"${name}"`;
    },
  };
}

export function compile(source: string, file = 'defs/test.yaml'): CompiledDefinition {
  return engine.compile({ name: 'test', file, source }, [stringsModule]);
}

export function render(source: string, fields: Record<string, unknown> = {}): RenderedDefinition {
  return compile(source).render(fields, renderContext());
}

/** The DefinitionError a call throws; fails the test when it throws nothing or something else. */
export function definitionErrorOf(run: () => unknown): DefinitionError {
  try {
    run();
  } catch (error) {
    if (error instanceof DefinitionError) return error;
    throw error;
  }
  throw new Error('expected a DefinitionError');
}

/** The document as a record, for reading fields in tests. */
export function fieldsOf(rendered: RenderedDefinition): Record<string, unknown> {
  return rendered.document as Record<string, unknown>;
}
