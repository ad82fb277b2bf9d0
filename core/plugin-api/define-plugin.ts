import type { RuntimeTransportFactory } from './runtime-transport.js';
import type { DependencyContainer } from 'tsyringe';
import type { AuthSchemeFactory } from './auth-scheme.js';
import type { TemplateEngine, TemplateFunction } from './template-engine.js';
import { StartupError } from './errors.js';
import type { SemanticProvider } from './semantic-provider.js';
import type { DialectBase } from './dialect-base.js';
import { extensionTokens, pluginTokens } from './tokens.js';
import type { PluginKind, PluginManifest } from './plugin-manifest.js';

/**
 * The default export of a plugin's entry: called once with the plugin's child container and its validated
 * config (the `config` of its `plugins` entry; `{}` when none).
 */
export type PluginRegistration = (container: DependencyContainer, config: Record<string, unknown>) => void | Promise<void>;

function manifestOf(container: DependencyContainer, kind: PluginKind): PluginManifest {
  const manifest = container.resolve(pluginTokens.manifest);
  if (manifest.kind !== kind) {
    throw new StartupError(`plugin ${manifest.name}: manifest kind is ${manifest.kind} but the entry registers a ${kind}`);
  }
  return manifest;
}

/** Declares a `sqlDialect` plugin: `export default defineSqlDialect((id) => new MyDialect(id))`, `MyDialect` extending `DialectBase`. */
export function defineSqlDialect(create: (id: string) => DialectBase): PluginRegistration {
  return (container) => {
    const manifest = manifestOf(container, 'sqlDialect');
    container.resolve(extensionTokens.sqlDialects).add(manifest.id, create(manifest.id), manifest.name);
  };
}

/** Declares an `authScheme` plugin: `export default defineAuthScheme((id) => ({ id, create }))`. */
export function defineAuthScheme(create: (id: string) => AuthSchemeFactory): PluginRegistration {
  return (container) => {
    const manifest = manifestOf(container, 'authScheme');
    container.resolve(extensionTokens.authSchemes).add(manifest.id, create(manifest.id), manifest.name);
  };
}

/** Declares a `templateEngine` plugin: `export default defineTemplateEngine((id) => myEngine(id))`. */
export function defineTemplateEngine(create: (id: string) => TemplateEngine): PluginRegistration {
  return (container) => {
    const manifest = manifestOf(container, 'templateEngine');
    container.resolve(extensionTokens.templateEngines).add(manifest.id, create(manifest.id), manifest.name);
  };
}

/**
 * Declares a `runtimeTransport` plugin: `export default defineRuntimeTransport((id, config) => factory)`.
 * The factory creates the transport from the service's `runtime` settings when the runtime is enabled.
 */
export function defineRuntimeTransport(create: (id: string, config: Record<string, unknown>) => RuntimeTransportFactory): PluginRegistration {
  return (container, config) => {
    const manifest = manifestOf(container, 'runtimeTransport');
    container.resolve(extensionTokens.runtimeTransports).add(manifest.id, create(manifest.id, config), manifest.name);
  };
}

/**
 * Declares a `semanticProvider` plugin: `export default defineSemanticProvider((id, config) => provider)`.
 * `config` is the plugin's validated config (defaults of its configSchema filled in).
 */
export function defineSemanticProvider(create: (id: string, config: Record<string, unknown>) => SemanticProvider): PluginRegistration {
  return (container, config) => {
    const manifest = manifestOf(container, 'semanticProvider');
    container.resolve(extensionTokens.semanticProviders).add(manifest.id, create(manifest.id, config), manifest.name);
  };
}

/**
 * Declares a `templateFunctions` plugin. The module name is the manifest id, so a template calls
 * `strings__slugify(title)` for id `strings` and function `slugify`.
 */
export function defineTemplateFunctions(
  functions: (config: Record<string, unknown>) => Record<string, TemplateFunction>,
): PluginRegistration {
  return (container, config) => {
    const manifest = manifestOf(container, 'templateFunctions');
    const provided = functions(config);
    for (const [name, fn] of Object.entries(provided)) {
      if (!/^[a-zA-Z][a-zA-Z0-9_]*$/.test(name) || name.includes('__')) {
        throw new StartupError(`plugin ${manifest.name}: function name "${name}" must be an identifier without "__"`);
      }
      if (typeof fn !== 'function') throw new StartupError(`plugin ${manifest.name}: "${name}" is not a function`);
    }
    container.resolve(extensionTokens.templateFunctions).add(manifest.id, { module: manifest.id, functions: provided }, manifest.name);
  };
}
