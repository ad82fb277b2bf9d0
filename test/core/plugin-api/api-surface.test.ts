import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

/** The project root (tests run from dist/test/core/plugin-api). */
const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** The entries of package.json's `exports` that are TypeScript modules, by subpath, as source files. */
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | { default: string; types: string }> };
const entries = Object.fromEntries(Object.entries(packageJson.exports)
  .filter((entry): entry is [string, { default: string; types: string }] => typeof entry[1] === 'object')
  .map(([subpath, target]) => [subpath, target.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')]));

const DECLARATION = /^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/;

/** Every public name of a module, each with the file and line that declares it. */
function exportsOf(file: string): Map<string, { file: string; line: number }> {
  const text = readFileSync(join(root, file), 'utf8');
  const lines = text.split('\n');
  const names = new Map<string, { file: string; line: number }>();
  const target = (specifier: string) => relative(root, resolve(root, dirname(file), specifier)).replace(/\.js$/, '.ts');
  lines.forEach((line, index) => {
    const declared = DECLARATION.exec(line);
    if (declared) names.set(declared[1] as string, { file, line: index });
  });
  for (const match of text.matchAll(/^export\s+\*\s+from\s+'([^']+)'/gm)) {
    for (const [name, where] of exportsOf(target(match[1] as string))) names.set(name, where);
  }
  for (const match of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'([^']+)'/gm)) {
    const from = exportsOf(target(match[2] as string));
    for (const part of (match[1] as string).split(',').map((item) => item.trim()).filter(Boolean)) {
      const [original, alias] = part.replace(/^type\s+/, '').split(/\s+as\s+/) as [string, string | undefined];
      const where = from.get(original);
      if (!where) throw new Error(`${file}: ${original} is not exported by ${match[2]}`);
      names.set(alias ?? original, where);
    }
  }
  return names;
}

/** Whether a doc comment (`/** … *\/`) ends on the line above the declaration. */
function documented(where: { file: string; line: number }): boolean {
  const lines = readFileSync(join(root, where.file), 'utf8').split('\n');
  return (lines[where.line - 1] ?? '').trim().endsWith('*/') && lines.slice(0, where.line).reverse().find((line) => line.includes('/*'))?.includes('/**') === true;
}

const surface = suite('the public surface of the plugin API');

surface('package.json exports the plugin API, the adapter kit and their conformance suites, each with types', () => {
  assert.equal(Object.keys(entries).sort(), ['./adapter-kit', './adapter-kit/conformance', './plugin-api', './plugin-api/conformance']);
  for (const [subpath, target] of Object.entries(packageJson.exports)) {
    if (typeof target === 'string') continue;
    assert.ok(existsSync(join(root, target.default)), `${subpath}: ${target.default} is built`);
    assert.ok(existsSync(join(root, target.types)), `${subpath}: ${target.types} is built`);
  }
});

surface('every exported name of every entry has a doc comment', () => {
  const missing = Object.values(entries).flatMap((file) => [...exportsOf(file)]
    .filter(([, where]) => !documented(where)).map(([name, where]) => `${name} (${where.file}:${where.line + 1})`));
  assert.equal([...new Set(missing)].sort(), []);
});

surface('the plugin API names what plugins use, not the core\'s helpers or the dialect kit', () => {
  const api = exportsOf(entries['./plugin-api'] as string);
  for (const internal of ['extensionTokens', 'pluginTokens', 'ExtensionPoint', 'formatProblem', 'KnexDatasource', 'DialectBase', 'SqlDialect', 'readCatalog', 'LruCache', 'defineSqlDialect']) {
    assert.not.ok(api.has(internal), `${internal} is exported by vdb-service/plugin-api`);
  }
  for (const needed of ['PLUGIN_API_VERSION', 'PluginContext', 'PluginRegistration', 'defineAuthScheme', 'CredentialError', 'TemplateEngine', 'SemanticProvider', 'RuntimeTransportFactory']) {
    assert.ok(api.has(needed), `${needed} is missing from vdb-service/plugin-api`);
  }
  // 241 names before the API was split and trimmed; grow it on purpose only (docs/plugin-api-changelog.md).
  assert.ok(api.size <= 150, `${api.size} names`);
  const kit = exportsOf(entries['./adapter-kit'] as string);
  for (const name of api.keys()) assert.ok(kit.has(name), `the adapter kit lacks ${name}`);
  assert.ok(kit.has('DialectBase') && kit.has('defineSqlDialect'));
});

surface('the contracts a plugin receives import no third-party module', () => {
  // every file of the API, the SQL-backend contract (sql-dialect.ts) and the adapter kit's entry included
  const contracts = readdirSync(join(root, 'core/plugin-api')).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => `core/plugin-api/${name}`);
  assert.ok(contracts.includes('core/plugin-api/sql-dialect.ts') && contracts.includes('core/plugin-api/index.ts'));
  const foreign = contracts.flatMap((file) => [...readFileSync(join(root, file), 'utf8').matchAll(/from\s+'([^'.][^']*)'/g)]
    .map((match) => match[1] as string).filter((specifier) => !specifier.startsWith('node:')).map((specifier) => `${file}: ${specifier}`));
  assert.equal(foreign, []);
});

surface.run();
