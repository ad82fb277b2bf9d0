import type { ServiceConfig } from '../config/config-types.js';
import type { EndpointRegistry } from '../endpoints/endpoint-registry.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import type { SemanticQueries } from '../semantic-query/semantic-query-service.js';
import type { SemanticRegistry } from '../semantic/semantic-registry.js';
import type { TaskOrchestrator } from '../tasks/task-orchestrator.js';
import type { VdbHandles } from '../vdb/vdb-handles.js';
import type { VdbRegistry } from '../vdb/vdb-registry.js';

/** What the tools read: the service's registries, resolved once the service is prepared. */
export interface McpServices {
  config: ServiceConfig;
  vdbs: VdbRegistry;
  handles: VdbHandles;
  endpoints: EndpointRegistry;
  tasks: TaskOrchestrator;
  /** Undefined while semantic activation has not finished. */
  semantic(): { registry: SemanticRegistry; queries: SemanticQueries } | undefined;
}

/** Who calls a tool, and for which HTTP request. */
export interface ToolCaller {
  principal: Principal;
  requestId: string;
  signal: AbortSignal;
}
