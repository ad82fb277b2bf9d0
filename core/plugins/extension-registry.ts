import type { AuthSchemeFactory } from '../plugin-api/auth-scheme.js';
import { StartupError } from '../plugin-api/errors.js';
import type { RuntimeTransportFactory } from '../plugin-api/runtime-transport.js';
import type { SemanticProvider } from '../plugin-api/semantic-provider.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { TemplateEngine, TemplateFunctionModule } from '../plugin-api/template-engine.js';
import type { PluginContributions } from '../plugin-api/plugin-context.js';
import type { PluginKind } from '../plugin-api/plugin-manifest.js';

/**
 * The host side of one plugin kind: plugins add their contribution under their manifest id, the core looks
 * it up by id. Adding the same id twice names both plugins; adding after `lock()` (startup has loaded every
 * plugin) is refused, so nothing changes what a running service dispatches to.
 */
export class ExtensionRegistry<T> {
  private readonly entries = new Map<string, { value: T; plugin: string }>();
  private locked = false;

  constructor(readonly kind: string) {}

  add(id: string, value: T, plugin: string): void {
    if (this.locked) throw new StartupError(`plugin ${plugin}: the ${this.kind} registry is closed once startup has loaded the plugins`);
    const existing = this.entries.get(id);
    if (existing) {
      throw new StartupError(`plugin ${plugin}: ${this.kind} id "${id}" is already registered by plugin ${existing.plugin}`);
    }
    this.entries.set(id, { value, plugin });
  }

  lock(): void {
    this.locked = true;
  }

  get(id: string): T | undefined {
    return this.entries.get(id)?.value;
  }

  ids(): string[] {
    return [...this.entries.keys()];
  }

  values(): T[] {
    return [...this.entries.values()].map((entry) => entry.value);
  }
}

/** Every extension point of the service, created empty and filled by the plugin loader. */
export class ExtensionRegistries {
  readonly sqlDialects = new ExtensionRegistry<SqlDialect>('sqlDialect');
  readonly authSchemes = new ExtensionRegistry<AuthSchemeFactory>('authScheme');
  readonly templateFunctions = new ExtensionRegistry<TemplateFunctionModule>('templateFunctions');
  readonly semanticProviders = new ExtensionRegistry<SemanticProvider>('semanticProvider');
  readonly templateEngines = new ExtensionRegistry<TemplateEngine>('templateEngine');
  readonly runtimeTransports = new ExtensionRegistry<RuntimeTransportFactory>('runtimeTransport');

  private readonly byKind: { readonly [K in PluginKind]: ExtensionRegistry<PluginContributions[K]> } = {
    sqlDialect: this.sqlDialects,
    authScheme: this.authSchemes,
    templateFunctions: this.templateFunctions,
    semanticProvider: this.semanticProviders,
    templateEngine: this.templateEngines,
    runtimeTransport: this.runtimeTransports,
  };

  /** Adds a plugin's contribution to the registry of its kind. */
  add<K extends PluginKind>(kind: K, id: string, value: PluginContributions[K], plugin: string): void {
    (this.byKind[kind] as ExtensionRegistry<PluginContributions[K]>).add(id, value, plugin);
  }

  /** What a plugin contributed to the registry of `kind` under `id`, if anything. */
  contributionOf<K extends PluginKind>(kind: K, id: string): PluginContributions[K] | undefined {
    return (this.byKind[kind] as ExtensionRegistry<PluginContributions[K]>).get(id);
  }

  /** Closes every registry: called once every plugin has registered. */
  lock(): void {
    for (const registry of Object.values(this.byKind)) registry.lock();
  }
}
