import type { InjectionToken } from 'tsyringe';
import type { Logger } from 'pino';
import type { AuthScheme, AuthSchemeFactory } from './auth/auth-contract.js';
import type { ServiceConfig } from './config/config-types.js';
import type { ExtensionRegistry } from './plugins/extension-registry.js';
import type { PluginManifest } from './plugins/plugin-manifest.js';
import type { DatasourcePool } from './sql/datasource-pool.js';
import type { SqlDialect } from './sql/dialect-contract.js';
import type { VdbRegistry } from './vdb/vdb-registry.js';
import type { TemplateFunctionModule } from './plugins/plugin-kinds.js';
import type { SemanticProvider } from './semantic/provider-contract.js';
import type { SemanticRegistry } from './semantic/semantic-registry.js';
import type { TemplateEngine } from './endpoints/template-engine-contract.js';
import type { EndpointRegistry } from './endpoints/endpoint-registry.js';
import type { RuntimeTransportFactory } from './tasks/runtime-contract.js';
import type { TaskOrchestrator } from './tasks/task-orchestrator.js';

/**
 * Every injection token of the core, in one place, with namespaced ids (`core.*`, `extension.*`,
 * `plugin.*`). Inject by explicit token: reflected types are fragile across `import type`.
 */
export const coreTokens = {
  config: 'core.config' as InjectionToken<ServiceConfig>,
  logger: 'core.logger' as InjectionToken<Logger>,
  /** The configured scheme (`auth.scheme`), ready to authenticate requests. */
  authScheme: 'core.authScheme' as InjectionToken<AuthScheme>,
  datasources: 'core.datasources' as InjectionToken<DatasourcePool>,
  vdbs: 'core.vdbs' as InjectionToken<VdbRegistry>,
  /** Semantic activation of every VDB, done once at startup; absent while the service initializes. */
  semantic: 'core.semantic' as InjectionToken<SemanticRegistry>,
  /** The query and action endpoints of the bundle, compiled and checked at startup. */
  endpoints: 'core.endpoints' as InjectionToken<EndpointRegistry>,
  /** The Task API's orchestrator, with the configured runtime transport. */
  tasks: 'core.tasks' as InjectionToken<TaskOrchestrator>,
} as const;

/** Registries through which plugins contribute to their host, one per plugin kind. */
export const extensionTokens = {
  sqlDialects: 'extension.sqlDialects' as InjectionToken<ExtensionRegistry<SqlDialect>>,
  authSchemes: 'extension.authSchemes' as InjectionToken<ExtensionRegistry<AuthSchemeFactory>>,
  templateFunctions: 'extension.templateFunctions' as InjectionToken<ExtensionRegistry<TemplateFunctionModule>>,
  semanticProviders: 'extension.semanticProviders' as InjectionToken<ExtensionRegistry<SemanticProvider>>,
  templateEngines: 'extension.templateEngines' as InjectionToken<ExtensionRegistry<TemplateEngine>>,
  runtimeTransports: 'extension.runtimeTransports' as InjectionToken<ExtensionRegistry<RuntimeTransportFactory>>,
} as const;

/** Registered in each plugin's child container while it registers. */
export const pluginTokens = {
  manifest: 'plugin.manifest' as InjectionToken<PluginManifest>,
} as const;
