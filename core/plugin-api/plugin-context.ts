import type { AuthSchemeFactory } from './auth-scheme.js';
import type { PluginKind, PluginManifest } from './plugin-manifest.js';
import type { RuntimeTransportFactory } from './runtime-transport.js';
import type { SemanticProvider } from './semantic-provider.js';
import type { SqlDialect } from './sql-dialect.js';
import type { TemplateEngine, TemplateFunctionModule } from './template-engine.js';

/** Optional structured fields of a log line, e.g. `{ url }`; never secrets. */
export type LogFields = Readonly<Record<string, unknown>>;

/** The service's log, as a plugin writes to it: each line carries the plugin's name. */
export interface PluginLogger {
  /** Detail for diagnosing the plugin; off at the default level. */
  debug(message: string, fields?: LogFields): void;
  /** Something the operator may want to know happened. */
  info(message: string, fields?: LogFields): void;
  /** Something the operator should look at; the plugin carries on. */
  warn(message: string, fields?: LogFields): void;
  /** A failure the plugin could not handle itself. */
  error(message: string, fields?: LogFields): void;
}

/** What a plugin of each kind contributes: the value its registration passes to `PluginContext.contribute`. */
export interface PluginContributions {
  /** A dialect: `DialectBase` subclass (see the adapter kit). */
  sqlDialect: SqlDialect;
  /** A factory of the scheme configured by the `auth` section. */
  authScheme: AuthSchemeFactory;
  /** The engine endpoint definitions are compiled with. */
  templateEngine: TemplateEngine;
  /** A module of functions callable in templates. */
  templateFunctions: TemplateFunctionModule;
  /** A source of semantic modules. */
  semanticProvider: SemanticProvider;
  /** A factory of the transport to the task runtime. */
  runtimeTransport: RuntimeTransportFactory;
}

/**
 * Everything a plugin's registration receives, and all it receives: its manifest, its validated config, a
 * logger, and the one call that adds its contribution. The service's own state (its config, datasources
 * and their credentials, VDBs) is not reachable from here.
 */
export interface PluginContext {
  /** The plugin's own `plugin.json`, validated. */
  readonly manifest: Readonly<PluginManifest>;
  /**
   * The `config` of the plugin's `plugins` entry, checked against its `configSchema` with the schema's
   * defaults filled in; `{}` for a built-in, a `sqlDialect` or an `authScheme` (their configSchema checks the
   * datasource `connection` or the `auth` section when the service uses them).
   */
  readonly config: Readonly<Record<string, unknown>>;
  /** The service's log, each line tagged with the plugin's name. */
  readonly logger: PluginLogger;
  /**
   * Adds the plugin's contribution under its manifest `id`. `kind` must be the manifest's kind; a second
   * contribution, or one after startup has loaded every plugin, is a startup error.
   */
  contribute<K extends PluginKind>(kind: K, value: PluginContributions[K]): void;
}

/**
 * The default export of a plugin's entry: called once at startup with the plugin's context. Write it with
 * the helper of the kind (`defineAuthScheme`, …), which checks the kind and contributes under the id.
 */
export type PluginRegistration = (context: PluginContext) => void | Promise<void>;
