import type { SemanticQueries } from './semantic-query/semantic-query-service.js';
import type { InjectionToken } from 'tsyringe';
import type { Logger } from 'pino';
import type { AuthScheme } from './plugin-api/auth-scheme.js';
import type { ServiceConfig } from './config/config-types.js';
import type { ExtensionRegistries } from './plugins/extension-registry.js';
import type { DatasourceRegistry } from './sql/datasource-registry.js';
import type { VdbRegistry } from './vdb/vdb-registry.js';
import type { VdbHandles } from './vdb/vdb-handles.js';
import type { SemanticRegistry } from './semantic/semantic-registry.js';
import type { EndpointRegistry } from './endpoints/endpoint-registry.js';
import type { ActionJournals } from './endpoints/actions/action-journal.js';
import type { TaskOrchestrator } from './tasks/task-orchestrator.js';
import type { ServiceMetrics } from './observe/service-metrics.js';
import type { DatasourceReadiness } from './observe/datasource-readiness.js';

/**
 * The core's own services in the service's container (`core.*`), resolved by the routes and the commands.
 * Plugins never see the container: a registration gets a `PluginContext` (core/plugin-api/plugin-context.ts).
 */
export const coreTokens = {
  config: 'core.config' as InjectionToken<ServiceConfig>,
  logger: 'core.logger' as InjectionToken<Logger>,
  /** What the plugins registered, by kind; locked once every plugin is loaded. */
  extensions: 'core.extensions' as InjectionToken<ExtensionRegistries>,
  /** The configured scheme (`auth.scheme`), ready to authenticate requests. */
  authScheme: 'core.authScheme' as InjectionToken<AuthScheme>,
  datasources: 'core.datasources' as InjectionToken<DatasourceRegistry>,
  vdbs: 'core.vdbs' as InjectionToken<VdbRegistry>,
  /** Each VDB with the datasources its statements run on (the SQL front door looks connections' databases up in it). */
  vdbHandles: 'core.vdbHandles' as InjectionToken<VdbHandles>,
  /** Semantic activation of every VDB, done once at startup; absent while the service initializes. */
  semantic: 'core.semantic' as InjectionToken<SemanticRegistry>,
  /** The semantic query compiler over the active packages; registered with `semantic`. */
  semanticQueries: 'core.semanticQueries' as InjectionToken<SemanticQueries>,
  /** The query and action endpoints of the bundle, compiled and checked at startup. */
  endpoints: 'core.endpoints' as InjectionToken<EndpointRegistry>,
  /** The journals of action runs (docs/actions.md#the-journal). */
  actionJournals: 'core.actionJournals' as InjectionToken<ActionJournals>,
  /** The Task API's orchestrator, with the configured runtime transport. */
  tasks: 'core.tasks' as InjectionToken<TaskOrchestrator>,
  /** The Prometheus metrics of this service (GET /observe/metrics). */
  metrics: 'core.metrics' as InjectionToken<ServiceMetrics>,
  /** Whether each opened datasource answers (GET /observe/ready, health's summary, the datasource-up gauge). */
  readiness: 'core.readiness' as InjectionToken<DatasourceReadiness>,
} as const;
