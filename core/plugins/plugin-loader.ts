import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Logger } from 'pino';
import type { ExtraPluginReference } from '../config/config-types.js';
import { displayPath } from '../config/yaml-source.js';
import { formatProblem, messageOf, StartupError } from '../plugin-api/errors.js';
import { apiVersionProblem, coreVersionProblem, describeAjvError, manifestProblems } from './manifest-validation.js';
import type { ExtensionRegistries } from './extension-registry.js';
import type { PluginManifest } from '../plugin-api/plugin-manifest.js';
import type { LogFields, PluginContext, PluginLogger, PluginRegistration } from '../plugin-api/plugin-context.js';

/** A plugin found on disk, before import. */
export interface DiscoveredPlugin {
  /** Absolute path of its plugin.json. */
  manifestPath: string;
  /** The `config` of its `plugins` entry; `{}` for built-ins. */
  config: Record<string, unknown>;
  builtIn: boolean;
}

export interface LoadedPlugin {
  manifest: PluginManifest;
  manifestPath: string;
  builtIn: boolean;
}

// dist/core/plugins -> dist/
const distRoot = fileURLToPath(new URL('../../', import.meta.url));
const BUILT_IN_ROOTS = ['adapters', 'plugins'];

/** Every built-in plugin folder: `adapters/*` and `plugins/*` that hold a plugin.json. */
export function discoverBuiltIns(root = distRoot): DiscoveredPlugin[] {
  return BUILT_IN_ROOTS.flatMap((folder) => {
    const dir = join(root, folder);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(dir, entry.name, 'plugin.json')))
      .map((entry) => ({ manifestPath: join(dir, entry.name, 'plugin.json'), config: {}, builtIn: true }))
      .sort((a, b) => a.manifestPath.localeCompare(b.manifestPath));
  });
}

/** Locates an extra plugin's manifest: a folder path, or a package resolved from the config's folder. */
export function locateExtra(reference: ExtraPluginReference, baseDir: string): DiscoveredPlugin {
  if (reference.kind === 'path') {
    return { manifestPath: join(reference.source, 'plugin.json'), config: reference.config, builtIn: false };
  }
  try {
    const require = createRequire(join(baseDir, 'service.yaml'));
    return { manifestPath: require.resolve(`${reference.source}/plugin.json`), config: reference.config, builtIn: false };
  } catch (error) {
    throw new StartupError(`plugin ${reference.source}: package not found or it has no plugin.json (${messageOf(error)})`);
  }
}

const configAjv = new Ajv2020({ allErrors: true, strict: false, useDefaults: true });

function fail(manifestPath: string, plugin: string, reason: string, cause?: unknown): never {
  const problem = { file: displayPath(manifestPath), message: `plugin ${plugin}: ${reason}` };
  throw new StartupError(formatProblem(problem), [problem], { cause });
}

function readManifest(manifestPath: string): PluginManifest {
  const folder = displayPath(dirname(manifestPath));
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'plugin.json not found' : `plugin.json is not valid JSON: ${messageOf(error)}`;
    return fail(manifestPath, folder, reason);
  }
  const problems = manifestProblems(parsed);
  if (problems.length > 0) {
    const name = typeof (parsed as { name?: unknown }).name === 'string' ? (parsed as { name: string }).name : folder;
    return fail(manifestPath, name, `invalid manifest: ${problems.join('; ')}`);
  }
  const manifest = parsed as PluginManifest;
  const incompatible = apiVersionProblem(manifest) ?? coreVersionProblem(manifest);
  if (incompatible) return fail(manifestPath, manifest.name, incompatible);
  return manifest;
}

/**
 * The loader pipeline: discover, validate each manifest, import its entry, check the export, validate the
 * plugin's config, register it with a context of its own. The first broken plugin stops startup with a
 * `StartupError` naming its manifest, the plugin and the reason.
 */
export async function loadPlugins(extensions: ExtensionRegistries, logger: Logger, plugins: DiscoveredPlugin[]): Promise<LoadedPlugin[]> {
  const manifests = plugins.map((plugin) => ({ ...plugin, manifest: readManifest(plugin.manifestPath) }));
  const owners = new Map<string, string>();
  for (const { manifest, manifestPath } of manifests) {
    const key = `${manifest.kind}:${manifest.id}`;
    const owner = owners.get(key);
    if (owner) fail(manifestPath, manifest.name, `${manifest.kind} id "${manifest.id}" is already used by plugin ${owner}`);
    owners.set(key, manifest.name);
  }

  const loaded: LoadedPlugin[] = [];
  for (const { manifest, manifestPath, config, builtIn } of manifests) {
    const register = await importEntry(manifest, manifestPath);
    const pluginConfig = validatePluginConfig(manifest, manifestPath, config);
    try {
      await register(pluginContext(manifest, pluginConfig, extensions, logger));
    } catch (error) {
      if (error instanceof StartupError && error.message.startsWith(`plugin ${manifest.name}:`)) {
        fail(manifestPath, manifest.name, error.message.slice(`plugin ${manifest.name}: `.length), error);
      }
      fail(manifestPath, manifest.name, `registration failed: ${messageOf(error)}`, error);
    }
    loaded.push({ manifest, manifestPath, builtIn });
  }
  return loaded;
}

/**
 * The one object a registration gets: frozen, holding copies and closures only, so nothing of the core
 * (its container, config, datasources) is reachable from it.
 */
function pluginContext(manifest: PluginManifest, config: Record<string, unknown>, extensions: ExtensionRegistries, logger: Logger): PluginContext {
  return Object.freeze({
    manifest: Object.freeze(structuredClone(manifest)),
    config: Object.freeze(config),
    logger: pluginLogger(logger.child({ plugin: manifest.name })),
    contribute(kind, value) {
      if (kind !== manifest.kind) {
        throw new StartupError(`plugin ${manifest.name}: manifest kind is ${manifest.kind} but the entry registers a ${kind}`);
      }
      extensions.add(kind, manifest.id, value, manifest.name);
    },
  } satisfies PluginContext);
}

function pluginLogger(log: Logger): PluginLogger {
  const line = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields): void => {
    if (fields === undefined) log[level](message);
    else log[level]({ ...fields }, message);
  };
  return Object.freeze({ debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') });
}

async function importEntry(manifest: PluginManifest, manifestPath: string): Promise<PluginRegistration> {
  const entryPath = resolve(dirname(manifestPath), manifest.entry);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(entryPath).href)) as { default?: unknown };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' && !existsSync(entryPath)
      ? `entry ${manifest.entry} not found`
      : `importing ${manifest.entry} failed: ${messageOf(error)}`;
    return fail(manifestPath, manifest.name, reason, error);
  }
  if (typeof module.default !== 'function') {
    return fail(manifestPath, manifest.name, `entry ${manifest.entry} must export a default registration function`);
  }
  return module.default as PluginRegistration;
}

/** Kinds whose configSchema describes a section used elsewhere (a datasource connection, the auth section). */
const SECTION_CONFIGURED: ReadonlySet<string> = new Set(['sqlDialect', 'authScheme']);

function validatePluginConfig(manifest: PluginManifest, manifestPath: string, config: Record<string, unknown>): Record<string, unknown> {
  if (!manifest.configSchema || SECTION_CONFIGURED.has(manifest.kind)) return config;
  const copy = structuredClone(config);
  const validate = configAjv.compile(manifest.configSchema);
  if (!validate(copy)) {
    fail(manifestPath, manifest.name, `invalid config: ${(validate.errors ?? []).map(describeAjvError).join('; ')}`);
  }
  return copy;
}
