import type { InjectionToken } from 'tsyringe';
import type { Logger } from 'pino';
import type { AuthSchemeFactory } from './auth-scheme.js';
import type { PluginManifest } from './plugin-manifest.js';
import type { RuntimeTransportFactory } from './runtime-transport.js';
import type { SemanticProvider } from './semantic-provider.js';
import type { SqlDialect } from './sql-dialect.js';
import type { TemplateEngine, TemplateFunctionModule } from './template-engine.js';

/**
 * Where a plugin kind's contributions go: a plugin adds under its manifest id, the core looks them up.
 * Adding an id twice, or after startup has finished loading plugins, is a startup error.
 */
export interface ExtensionPoint<T> {
  add(id: string, value: T, plugin: string): void;
}

/** The extension points, one per plugin kind (`extension.*`): what a plugin's registration adds to. */
export const extensionTokens = {
  sqlDialects: 'extension.sqlDialects' as InjectionToken<ExtensionPoint<SqlDialect>>,
  authSchemes: 'extension.authSchemes' as InjectionToken<ExtensionPoint<AuthSchemeFactory>>,
  templateFunctions: 'extension.templateFunctions' as InjectionToken<ExtensionPoint<TemplateFunctionModule>>,
  semanticProviders: 'extension.semanticProviders' as InjectionToken<ExtensionPoint<SemanticProvider>>,
  templateEngines: 'extension.templateEngines' as InjectionToken<ExtensionPoint<TemplateEngine>>,
  runtimeTransports: 'extension.runtimeTransports' as InjectionToken<ExtensionPoint<RuntimeTransportFactory>>,
} as const;

/**
 * What a plugin may resolve from its child container (`plugin.*`, `core.*`): its own manifest and the
 * service's logger. Core state (VDBs, datasources, endpoints) is not part of the plugin API.
 */
export const pluginTokens = {
  manifest: 'plugin.manifest' as InjectionToken<PluginManifest>,
  logger: 'core.logger' as InjectionToken<Logger>,
} as const;
