import type { RuntimeTransportFactory } from './runtime-transport.js';
import type { AuthSchemeFactory } from './auth-scheme.js';
import type { TemplateEngine, TemplateFunction } from './template-engine.js';
import { StartupError } from './errors.js';
import type { SemanticProvider } from './semantic-provider.js';
import type { DialectBase } from './dialect-base.js';
import type { PluginRegistration } from './plugin-context.js';

/** Declares a `sqlDialect` plugin: `export default defineSqlDialect((id) => new MyDialect(id))`, `MyDialect` extending `DialectBase`. */
export function defineSqlDialect(create: (id: string) => DialectBase): PluginRegistration {
  return (context) => context.contribute('sqlDialect', create(context.manifest.id));
}

/** Declares an `authScheme` plugin: `export default defineAuthScheme((id) => ({ id, create }))`. */
export function defineAuthScheme(create: (id: string) => AuthSchemeFactory): PluginRegistration {
  return (context) => context.contribute('authScheme', create(context.manifest.id));
}

/** Declares a `templateEngine` plugin: `export default defineTemplateEngine((id) => myEngine(id))`. */
export function defineTemplateEngine(create: (id: string) => TemplateEngine): PluginRegistration {
  return (context) => context.contribute('templateEngine', create(context.manifest.id));
}

/**
 * Declares a `runtimeTransport` plugin: `export default defineRuntimeTransport((id, config) => factory)`.
 * The factory creates the transport from the service's `runtime` settings when the runtime is enabled.
 */
export function defineRuntimeTransport(create: (id: string, config: Readonly<Record<string, unknown>>) => RuntimeTransportFactory): PluginRegistration {
  return (context) => context.contribute('runtimeTransport', create(context.manifest.id, context.config));
}

/**
 * Declares a `semanticProvider` plugin: `export default defineSemanticProvider((id, config) => provider)`.
 * `config` is the plugin's validated config (defaults of its configSchema filled in).
 */
export function defineSemanticProvider(create: (id: string, config: Readonly<Record<string, unknown>>) => SemanticProvider): PluginRegistration {
  return (context) => context.contribute('semanticProvider', create(context.manifest.id, context.config));
}

/**
 * Declares a `templateFunctions` plugin. The module name is the manifest id, so a template calls
 * `strings__slugify(title)` for id `strings` and function `slugify`.
 */
export function defineTemplateFunctions(
  functions: (config: Readonly<Record<string, unknown>>) => Record<string, TemplateFunction>,
): PluginRegistration {
  return (context) => {
    const { manifest } = context;
    const provided = functions(context.config);
    for (const [name, fn] of Object.entries(provided)) {
      if (!/^[a-zA-Z][a-zA-Z0-9_]*$/.test(name) || name.includes('__')) {
        throw new StartupError(`plugin ${manifest.name}: function name "${name}" must be an identifier without "__"`);
      }
      if (typeof fn !== 'function') throw new StartupError(`plugin ${manifest.name}: "${name}" is not a function`);
    }
    context.contribute('templateFunctions', { module: manifest.id, functions: provided });
  };
}
