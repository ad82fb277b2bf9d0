import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ExtensionRegistries } from '../../../core/plugins/extension-registry.js';
import { loadPlugins } from '../../../core/plugins/plugin-loader.js';
import { scalarValue } from '../../../core/endpoints/bound-text.js';
import { stringFunctions } from '../../../plugins/functions-strings/string-functions.js';
import { createTwingTemplateEngine } from '../../../plugins/template-twing/twing-template-engine.js';
import { renderContext } from './template-support.js';

const plugins = suite('template plugins');

const manifest = (folder: string) => fileURLToPath(new URL(`../../../plugins/${folder}/plugin.json`, import.meta.url));

plugins('the twing engine and the strings module register through their manifests', async () => {
  const extensions = new ExtensionRegistries();
  await loadPlugins(extensions, pino({ level: 'silent' }), ['template-twing', 'functions-strings'].map((folder) => ({ manifestPath: manifest(folder), config: {}, builtIn: true })));

  const engine = extensions.templateEngines.get('twing');
  const modules = extensions.templateFunctions.values();
  assert.ok(engine);
  assert.equal(modules.map((module) => module.module), ['strings']);
  const rendered = engine.compile({ name: 'slug', file: 'defs/slug.yaml', source: 'slug: {{ strings__slugify(title) }}' }, modules).render({ title: 'A B' }, renderContext());
  assert.is(scalarValue((rendered.document as Record<string, unknown>)['slug'], rendered.values), 'a-b');
});

plugins('modules can arrive after other definitions compiled; a clashing implementation is refused', () => {
  const engine = createTwingTemplateEngine('twing');
  engine.compile({ name: 'a', file: 'a.yaml', source: 'a: 1' }, []);
  const sum = { module: 'math', functions: { add: (a: unknown, b: unknown) => Number(a) + Number(b) } };
  const rendered = engine.compile({ name: 'b', file: 'b.yaml', source: 'a: {{ math__add(1, 2) }}' }, [sum]).render({}, renderContext());
  assert.equal(rendered.values, [3]);
  const other = { module: 'math', functions: { add: () => 0 } };
  assert.throws(() => engine.compile({ name: 'c', file: 'c.yaml', source: 'a: 1' }, [other]), /registered twice/);
});

plugins('a module function that returns a promise is refused at render', () => {
  const engine = createTwingTemplateEngine('twing');
  const slow = { module: 'net', functions: { fetch: async () => 1 } };
  const definition = engine.compile({ name: 'a', file: 'a.yaml', source: 'a: {{ net__fetch() }}' }, [slow]);
  assert.throws(() => definition.render({}, renderContext()), /must be synchronous/);
});

plugins('the strings module: slugify, upper, lower, trim; null stays null', () => {
  const { slugify, upper, lower, trim } = stringFunctions as Record<string, (value: unknown) => unknown>;
  assert.is(slugify!("  Crème Brûlée: l'été 2026!  "), 'creme-brulee-l-ete-2026');
  assert.is(upper!('abc'), 'ABC');
  assert.is(lower!('ÀBC'), 'àbc');
  assert.is(trim!('  a b  '), 'a b');
  assert.is(upper!(12), '12');
  for (const fn of [slugify, upper, lower, trim]) assert.is(fn!(null), null);
});

plugins.run();
