import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StartupError } from '../../../core/plugin-api/errors.js';
import { ExtensionRegistries } from '../../../core/plugins/extension-registry.js';
import { discoverBuiltIns, loadPlugins, locateExtra, type DiscoveredPlugin, type LoadedPlugin } from '../../../core/plugins/plugin-loader.js';
import { apiVersionProblem, coreVersionProblem } from '../../../core/plugins/manifest-validation.js';
import { PLUGIN_API_VERSION } from '../../../core/plugin-api/api-version.js';

const fixtures = fileURLToPath(new URL('../../fixtures/plugins/', import.meta.url));

const logger = pino({ level: 'silent' });

function fixture(name: string, config: Record<string, unknown> = {}): DiscoveredPlugin {
  return locateExtra({ kind: 'path', source: join(fixtures, name), config }, fixtures);
}

async function loadError(plugins: DiscoveredPlugin[], extensions = new ExtensionRegistries()): Promise<StartupError> {
  try {
    await loadPlugins(extensions, logger, plugins);
  } catch (error) {
    assert.instance(error, StartupError);
    return error as StartupError;
  }
  throw new Error('expected the load to fail');
}

const loader = suite('plugin loader');

loader('discovers and registers every built-in dialect and auth scheme', async () => {
  const extensions = new ExtensionRegistries();
  const loaded = await loadPlugins(extensions, logger, discoverBuiltIns());
  assert.ok(loaded.every((plugin) => plugin.builtIn));
  assert.equal(extensions.sqlDialects.ids().sort(), ['mssql', 'mysql', 'oracle', 'pglite', 'postgres']);
  assert.equal(extensions.authSchemes.ids().sort(), ['bearer', 'jwt']);
});

loader('loads an extra plugin from a path with its config and defaults', async () => {
  const extensions = new ExtensionRegistries();
  await loadPlugins(extensions, logger, [fixture('greeting', {})]);
  const module = extensions.templateFunctions.get('greeting');
  assert.equal(module?.functions['greet']?.('Ada'), 'Hello, Ada!');

  const configured = new ExtensionRegistries();
  await loadPlugins(configured, logger, [fixture('greeting', { salutation: 'Hi' })]);
  assert.equal(configured.templateFunctions.get('greeting')?.functions['greet']?.('Bo'), 'Hi, Bo!');
});

const broken: [string, RegExp][] = [
  ['bad-json', /bad-json\/plugin\.json: plugin .*bad-json: plugin\.json is not valid JSON/],
  ['bad-schema', /plugin bad-schema: invalid manifest: \(root\): unknown key "colour"; kind: must be one of/],
  ['missing-entry', /plugin missing-entry: entry nowhere\.js not found/],
  ['import-throws', /plugin import-throws: importing index\.js failed: cannot initialise the frobnicator/],
  ['no-default-export', /plugin no-default-export: entry index\.js must export a default registration function/],
  ['kind-mismatch', /plugin kind-mismatch: manifest kind is authScheme but the entry registers a templateFunctions/],
  ['register-throws', /plugin register-throws: registration failed: license key rejected/],
  ['bad-config', /plugin bad-config: invalid config: \(root\): must have required property 'prefix'/],
  ['bad-function-name', /plugin bad-function-name: function name "split__twice" must be an identifier without "__"/],
  ['core-too-new', /plugin core-too-new: needs vdb-service >=9\.0\.0 \(coreVersion\), but this is \d+\.\d+\.\d+/],
  ['core-range-invalid', /plugin core-range-invalid: coreVersion "the latest one" is not a semver range/],
  ['api-too-new', /plugin api-too-new: needs plugin API \^2\.0\.0 \(apiVersion\), but vdb-service \d+\.\d+\.\d+ provides plugin API 1\.\d+\.\d+ \(docs\/plugin-api-changelog\.md\)/],
  ['api-range-invalid', /plugin api-range-invalid: apiVersion "the newest" is not a semver range \(e\.g\. "\^1\.0\.0"\)/],
];

for (const [name, expected] of broken) {
  loader(`a broken plugin (${name}) stops the load with one line naming it and the reason`, async () => {
    const error = await loadError([fixture(name)]);
    assert.match(error.message, expected);
    assert.not.match(error.message, /\n/);
    assert.not.match(error.message, /at .*\.js:\d+/);
  });
}

loader('every built-in plugin declares a coreVersion range that includes this core', async () => {
  const loaded = await loadPlugins(new ExtensionRegistries(), logger, discoverBuiltIns());
  for (const { manifest } of loaded) {
    assert.type(manifest.coreVersion, 'string', `${manifest.name} has no coreVersion`);
    assert.is(coreVersionProblem(manifest), undefined);
  }
  assert.match(coreVersionProblem({ ...(loaded[0] as LoadedPlugin).manifest, coreVersion: '^0.1.0' }, '1.0.0') ?? '', /needs vdb-service \^0\.1\.0/);
});

loader('every built-in plugin declares an apiVersion range that includes the plugin API', async () => {
  const loaded = await loadPlugins(new ExtensionRegistries(), logger, discoverBuiltIns());
  assert.ok(loaded.length >= 14);
  for (const { manifest } of loaded) {
    assert.is(manifest.apiVersion, '^1.0.0', `${manifest.name} declares apiVersion`);
    assert.is(apiVersionProblem(manifest), undefined);
  }
  // The next major version refuses them, each with what it needs and what the service provides.
  const [first] = loaded as [LoadedPlugin];
  assert.match(apiVersionProblem(first.manifest, '2.0.0') ?? '', /needs plugin API \^1\.0\.0 \(apiVersion\), but vdb-service .* provides plugin API 2\.0\.0/);
  assert.is(apiVersionProblem(first.manifest, '1.4.0'), undefined, 'a minor version adds only');
});

loader('a manifest without apiVersion is read as written for ^1.0.0: accepted now, refused by the next major version', async () => {
  const extensions = new ExtensionRegistries();
  const [loaded] = await loadPlugins(extensions, logger, [fixture('greeting')]);
  assert.is(loaded?.manifest.apiVersion, undefined);
  assert.ok(extensions.templateFunctions.get('greeting'));
  assert.match(apiVersionProblem((loaded as LoadedPlugin).manifest, '2.0.0') ?? '', /needs plugin API \^1\.0\.0 \(no apiVersion, read as \^1\.0\.0\)/);
  assert.match(PLUGIN_API_VERSION, /^1\./);
});

loader('the registries refuse additions once startup has locked them', async () => {
  const extensions = new ExtensionRegistries();
  await loadPlugins(extensions, logger, [fixture('greeting')]);
  extensions.lock();
  const error = await loadError([fixture('greeting')], extensions);
  assert.match(error.message, /plugin greeting: the templateFunctions registry is closed once startup has loaded the plugins/);
});

loader('a plugin claiming a built-in id is refused, naming both plugins', async () => {
  const error = await loadError([...discoverBuiltIns(), fixture('duplicate-dialect')]);
  assert.match(error.message, /plugin duplicate-dialect: sqlDialect id "pglite" is already used by plugin vdb-adapter-pglite/);
});

loader('a missing extra plugin folder is reported', async () => {
  const error = await loadError([fixture('does-not-exist')]);
  assert.match(error.message, /does-not-exist\/plugin\.json: plugin .*does-not-exist: plugin\.json not found/);
});

loader('a package that cannot be resolved is reported by name', () => {
  assert.throws(() => locateExtra({ kind: 'package', source: 'vdb-plugin-that-is-not-installed', config: {} }, fixtures),
    /plugin vdb-plugin-that-is-not-installed: package not found/);
});

loader.run();
