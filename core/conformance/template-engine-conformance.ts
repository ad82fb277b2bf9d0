import assert from 'node:assert/strict';
import { DefinitionError } from '../endpoints/definition-error.js';
import { placeholderToken } from '../endpoints/bound-text.js';
import type { RenderContext, TemplateEngine, TemplateFunctionModule } from '../plugin-api/template-engine.js';
import { loadContribution, type ConformanceCase, type LoadedContribution } from './conformance-case.js';

/** How the engine's templates print a variable and call a function; the defaults are Twig's. */
export interface TemplateSyntax {
  /** A template that prints the variable `name`, e.g. `{{ name }}`. */
  print(name: string): string;
  /** A template that prints `module__fn(name)`, e.g. `{{ strings__upper(name) }}`. */
  call(fn: string, name: string): string;
  /** A template the engine cannot compile, e.g. `{{ name `. */
  broken: string;
}

/** What the template engine suite runs against. */
export interface TemplateEngineConformanceTarget {
  /** The folder holding the plugin's plugin.json, beside its built entry. */
  plugin: string;
  /** How its templates are written; Twig's `{{ }}` when absent. */
  syntax?: TemplateSyntax;
}

const TWIG: TemplateSyntax = {
  print: (name) => `{{ ${name} }}`,
  call: (fn, name) => `{{ ${fn}(${name}) }}`,
  broken: '{{ name ',
};

/** Values a request may carry that would change the statement if they became text; the last forges a token. */
const HOSTILE = ["x'); drop table orders; --", '{{ 7*7 }}', '${env:HOME}', 'a\nb: c', placeholderToken(9)];

function renderContext(): RenderContext {
  return {
    _context: { vdb: 'conformance', requestId: 'req-1', caller: { subject: 'alice' }, now: new Date('2026-01-02T03:04:05Z') },
    identifier: (name) => `"${name.replaceAll('"', '""')}"`,
  };
}

function definitionErrorOf(run: () => unknown): DefinitionError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof DefinitionError, `expected a DefinitionError, got ${String(error)}`);
    return error;
  }
  return assert.fail('expected a DefinitionError');
}

/**
 * The conformance suite of `templateEngine` plugins: the plugin loads as the service loads it; a compiled
 * definition names its variables; rendering never turns a request value into text (each printed value is
 * a placeholder token and the value is captured); an absent variable is null; a rendered document is frozen;
 * template functions are callable as `<module>__<name>`; faults are `DefinitionError`s naming the file.
 */
export function templateEngineConformance(target: TemplateEngineConformanceTarget): ConformanceCase[] {
  const syntax = target.syntax ?? TWIG;
  let loading: Promise<LoadedContribution<'templateEngine'>> | undefined;
  const loaded = () => (loading ??= loadContribution('templateEngine', target.plugin));
  const engine = async (): Promise<TemplateEngine> => (await loaded()).contribution;
  const shout: TemplateFunctionModule = { module: 'conformance', functions: { shout: (value: unknown) => `${String(value)}!` } };
  const compile = async (source: string, functions: readonly TemplateFunctionModule[] = []) =>
    (await engine()).compile({ name: 'probe', file: 'defs/probe.yaml', source }, functions);

  return [
    { name: 'loads through the service loader as a templateEngine under its manifest id', run: async () => {
      const { manifest, contribution } = await loaded();
      assert.equal(contribution.id, manifest.id);
    } },
    { name: 'a compiled definition keeps its name and file and lists the variables it reads', run: async () => {
      const compiled = await compile(`value: ${syntax.print('name')}\nother: ${syntax.print('count')}\n`);
      assert.equal(compiled.name, 'probe');
      assert.equal(compiled.file, 'defs/probe.yaml');
      assert.deepEqual([...compiled.variables].sort(), ['count', 'name']);
      assert.ok(Array.isArray(compiled.warnings));
    } },
    { name: 'a printed request value becomes a placeholder token, never text, and its value is captured', run: async () => {
      const compiled = await compile(`value: ${syntax.print('name')}\n`);
      for (const hostile of HOSTILE) {
        const rendered = compiled.render({ name: hostile }, renderContext());
        const value = (rendered.document as Record<string, unknown>)['value'];
        assert.equal(typeof value, 'string');
        const index = rendered.values.indexOf(hostile);
        assert.ok(index >= 0, `the value ${JSON.stringify(hostile)} is captured`);
        assert.equal(value, placeholderToken(index));
        assert.ok(!JSON.stringify(rendered.document).includes(hostile), `${JSON.stringify(hostile)} appears in the document`);
        assert.equal(rendered.origin.file, 'defs/probe.yaml');
        assert.equal(rendered.origin.lines[index], 1);
      }
    } },
    { name: 'an absent variable renders as a captured null', run: async () => {
      const rendered = (await compile(`value: ${syntax.print('name')}\n`)).render({}, renderContext());
      const value = (rendered.document as Record<string, unknown>)['value'];
      assert.equal(value, placeholderToken(rendered.values.indexOf(null)));
    } },
    { name: 'a rendered document is frozen, and renders of one text answer equal documents', run: async () => {
      const compiled = await compile(`list:\n  - ${syntax.print('name')}\nfixed: 1\n`);
      const first = compiled.render({ name: 'a' }, renderContext());
      const second = compiled.render({ name: 'b' }, renderContext());
      assert.ok(Object.isFrozen(first.document));
      assert.ok(Object.isFrozen((first.document as { list: unknown[] }).list));
      assert.deepEqual(first.document, second.document);
      assert.deepEqual([first.values.includes('a'), second.values.includes('b')], [true, true]);
    } },
    { name: 'template functions are called as <module>__<name> with the call arguments', run: async () => {
      const rendered = (await compile(`value: ${syntax.call('conformance__shout', 'name')}\n`, [shout])).render({ name: 'hi' }, renderContext());
      const value = (rendered.document as Record<string, unknown>)['value'];
      assert.ok(rendered.values.includes('hi!') || value === 'hi!', `shout(name) printed ${JSON.stringify(value)}`);
    } },
    { name: 'a template that does not compile is a DefinitionError naming the file', run: async () => {
      const live = await engine();
      const error = definitionErrorOf(() => live.compile({ name: 'probe', file: 'defs/broken.yaml', source: `value: ${syntax.broken}\n` }, []));
      assert.equal(error.file, 'defs/broken.yaml');
      assert.ok(error.message.startsWith('defs/broken.yaml'), error.message);
    } },
    { name: 'a body that is not YAML is a DefinitionError naming the file', run: async () => {
      const live = await engine();
      const error = definitionErrorOf(() => live.compile({ name: 'probe', file: 'defs/bad.yaml', source: `value: [${syntax.print('name')}\n` }, [])
        .render({ name: 1 }, renderContext()));
      assert.equal(error.file, 'defs/bad.yaml');
    } },
  ];
}
