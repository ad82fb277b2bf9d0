/**
 * The MCP tools (docs/mcp.md): the list a caller sees and the call of each, through the same engines and
 * the same pipeline as the HTTP route each one mirrors, so that both answer alike. Arguments are read by
 * the service itself (a missing or wrong one answers the service's own code), never by the SDK.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { effectiveGrants, type CallerGrants } from '../authorization/grants.js';
import type { ServiceConfig } from '../config/config-types.js';
import type { ActionEndpoint } from '../endpoints/action-endpoint.js';
import type { EndpointRequest } from '../endpoints/endpoint-request.js';
import type { QueryEndpoint } from '../endpoints/query-endpoint.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { ConflictError, ForbiddenError, InputError, NotFoundError } from '../plugin-api/errors.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { readSemanticQuery } from '../semantic-query/query-input.js';
import type { SemanticQueries } from '../semantic-query/semantic-query-service.js';
import { catalogView, listedVdb } from '../server/routes/catalog-routes.js';
import { fieldsSchema } from '../server/routes/endpoint-routes.js';
import type { JsonSchema } from '../server/openapi/openapi-types.js';
import type { McpServices, ToolCaller } from './mcp-services.js';
import { runSql } from './run-sql.js';
import { metricSummary, semanticSummary, visiblePackage } from './semantic-view.js';

type Arguments = Readonly<Record<string, unknown>>;

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;
const VDB_PROPERTIES = {
  vdb: { type: 'string', description: 'The VDB name (list_vdbs).' },
  version: { type: 'string', description: 'The VDB version; may be left out when the VDB has one version.' },
} as const;

const SEMANTIC_QUERY_PROPERTIES = {
  dimensions: { type: 'array', description: '`dataset.field` names (or objects with `field`, `grain`, `alias`).' },
  measures: { type: 'array', description: 'Metric names or aggregate expressions.' },
  fields: { type: 'array', description: 'A scalar query instead of dimensions and measures.' },
  where: { description: 'An OSI expression, a structured filter, or a list of them.' },
  having: { description: 'As `where`, over measures.' },
  orderBy: { type: 'array' },
  limit: { type: 'integer', minimum: 0 },
  explain: { type: 'boolean', description: 'true: answer the compiled `{sql, params}` without running it.' },
} as const;

/** The tools of the service itself, whoever calls. */
const FIXED_TOOLS: Tool[] = [
  {
    name: 'list_vdbs',
    description: 'Every VDB version with the caller\'s access (complete, restricted, unavailable), and its description, catalog revision and semantic activation state unless the access is unavailable.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { title: 'List VDBs', ...READ_ONLY },
  },
  {
    name: 'describe_vdb',
    description: 'The caller\'s catalog of a VDB (relations, columns with logical types, keys) and its semantic model\'s datasets, fields and metrics, as far as the caller\'s grants reach.',
    inputSchema: { type: 'object', properties: VDB_PROPERTIES, required: ['vdb'] },
    annotations: { title: 'Describe a VDB', ...READ_ONLY },
  },
  {
    name: 'run_sql',
    description: 'One read-only SQL statement on a VDB, in the dialect of its datasource, run as the caller\'s database role within the service\'s time and size bounds. '
      + 'Parameters are numbered $1, $2, … on every backend. `rowCount` is the number of rows returned; `truncated` says maxRows or the result budget cut it.',
    inputSchema: {
      type: 'object',
      properties: {
        ...VDB_PROPERTIES,
        sql: { type: 'string', description: 'One statement, relations qualified by schema.' },
        params: { type: 'array', description: 'The values of $1, $2, …, bound, never spliced into the text.' },
        maxRows: { type: 'integer', minimum: 0, description: 'Return at most this many rows.' },
      },
      required: ['vdb', 'sql'],
    },
    annotations: { title: 'Run read-only SQL', ...READ_ONLY },
  },
  {
    name: 'list_metrics',
    description: 'The metrics of a VDB\'s active semantic model the caller may query, with their descriptions.',
    inputSchema: { type: 'object', properties: VDB_PROPERTIES, required: ['vdb'] },
    annotations: { title: 'List metrics', ...READ_ONLY },
  },
  {
    name: 'query_metrics',
    description: 'Measures by dimensions of a VDB\'s active semantic model (OSI semantics: no fan-out, no chasm trap), run as the caller.',
    inputSchema: { type: 'object', properties: { ...VDB_PROPERTIES, ...SEMANTIC_QUERY_PROPERTIES }, required: ['vdb'] },
    annotations: { title: 'Query metrics', ...READ_ONLY },
  },
];

/** A tool's answer: what it returns on success, a service error on failure. */
export type ToolOutcome = { structured: Record<string, unknown> };

export class McpTools {
  constructor(private readonly services: McpServices) {}

  /** The tools `caller` may call: the fixed ones, and the endpoints of the VDBs it has a data role on. */
  list(caller: Principal): Tool[] {
    const { endpoints, config } = this.services;
    const { queries, actions } = endpoints.list();
    const reachable = (endpoint: QueryEndpoint | ActionEndpoint) => effectiveGrants(endpoint.handle.vdb, caller).access !== 'unavailable';
    const ask: Tool[] = config.runtime.enabled ? [askTool(config)] : [];
    return [
      ...FIXED_TOOLS,
      ...queries.filter(reachable).map((query) => endpointTool('query', query)),
      ...actions.filter(reachable).map((action) => endpointTool('action', action)),
      ...ask,
    ];
  }

  /** Whether the service has a tool of that name, for some caller. */
  offers(name: string): boolean {
    const { endpoints, config } = this.services;
    if (FIXED_TOOLS.some((tool) => tool.name === name)) return true;
    if (name === 'ask') return config.runtime.enabled;
    if (name.startsWith('query_')) return endpoints.findQuery(name.slice('query_'.length)) !== undefined;
    return name.startsWith('action_') && endpoints.list().actions.some((action) => action.name === name.slice('action_'.length));
  }

  /** Runs a tool; a refusal or failure is thrown as the service's error, for the caller to word. */
  async call(name: string, args: Arguments, caller: ToolCaller): Promise<ToolOutcome> {
    switch (name) {
      case 'list_vdbs': return { structured: this.listVdbs(caller.principal) };
      case 'describe_vdb': return { structured: this.describeVdb(args, caller.principal) };
      case 'run_sql': return { structured: await runSql(this.services, this.vdbOf(args), args, caller) };
      case 'list_metrics': return { structured: this.listMetrics(args, caller.principal) };
      case 'query_metrics': return { structured: await this.queryMetrics(args, caller) };
      case 'ask': if (this.services.config.runtime.enabled) return { structured: await this.ask(args, caller) }; break;
      default:
        if (name.startsWith('query_')) {
          const query = this.reachable(this.services.endpoints.findQuery(name.slice('query_'.length)), caller.principal);
          if (query) return { structured: { ...(await query.perform(this.endpointRequest(args, caller))), truncated: false } };
        }
        if (name.startsWith('action_')) {
          const action = this.reachable(this.services.endpoints.list().actions.find((candidate) => candidate.name === name.slice('action_'.length)), caller.principal);
          if (action) {
            // the Idempotency-Key header's value, as an argument: a retried call answers the first run's answer
            const { idempotencyKey, ...fields } = args;
            if (idempotencyKey !== undefined && typeof idempotencyKey !== 'string') throw new InputError('invalid_idempotency_key', 'idempotencyKey must be a string');
            return { structured: { ...(await action.run(this.endpointRequest(fields, caller), idempotencyKey)) } };
          }
        }
    }
    throw new NotFoundError('not_found', `no tool ${name}`);
  }

  /** The VDB and the caller's grants on it; 403 when the caller has no data role on it. */
  grantsOn(vdb: VirtualDatabase, caller: Principal): CallerGrants {
    const grants = effectiveGrants(vdb, caller);
    if (grants.access === 'unavailable') throw new ForbiddenError('forbidden', `the caller has no data role on VDB ${vdb.name} version ${vdb.version}`);
    return grants;
  }

  /** The VDB of `vdb` and `version` (the only version when left out). */
  vdbOf(args: Arguments): VirtualDatabase {
    const name = args['vdb'];
    if (name === undefined || name === null) throw new InputError('missing_fields', 'the arguments lack needed field vdb', { details: { missing: ['vdb'] } });
    if (typeof name !== 'string') throw new InputError('invalid_body', 'vdb must be a string');
    const given = args['version'];
    // a client that reads `version=1` as JSON sends a number (the Inspector's CLI does)
    const version = typeof given === 'number' && Number.isSafeInteger(given) ? String(given) : given;
    if (version !== undefined && version !== null && typeof version !== 'string') throw new InputError('invalid_body', 'version must be a string');
    if (typeof version === 'string') return this.services.vdbs.get(name, version);
    const versions = this.services.vdbs.versionsOf(name);
    if (versions.length === 0) throw new NotFoundError('vdb_not_found', `VDB ${name} is not active`);
    if (versions.length > 1) {
      throw new ConflictError('ambiguous_vdb_version', `VDB ${name} has ${versions.length} versions (${versions.map((vdb) => vdb.version).join(', ')}): name one in version`);
    }
    return versions[0] as VirtualDatabase;
  }

  private reachable<T extends QueryEndpoint | ActionEndpoint>(endpoint: T | undefined, caller: Principal): T | undefined {
    return endpoint && effectiveGrants(endpoint.handle.vdb, caller).access !== 'unavailable' ? endpoint : undefined;
  }

  private listVdbs(caller: Principal): Record<string, unknown> {
    const registry = this.services.semantic()?.registry;
    return {
      vdbs: this.services.vdbs.list().map((vdb) => {
        const listed = listedVdb(vdb, caller);
        // its semantic model's state is of what it holds too
        return listed.access === 'unavailable' ? listed : { ...listed, state: registry?.find(vdb.name, vdb.version)?.state ?? 'catalogOnly' };
      }),
    };
  }

  private describeVdb(args: Arguments, caller: Principal): Record<string, unknown> {
    const vdb = this.vdbOf(args);
    const grants = this.grantsOn(vdb, caller);
    const pkg = this.services.semantic()?.registry.packageOf(vdb.name, vdb.version)?.document;
    return { ...catalogView(vdb, grants), semantic: pkg ? semanticSummary(visiblePackage(pkg, grants)) : null };
  }

  private semanticQueries(): SemanticQueries {
    const semantic = this.services.semantic();
    if (!semantic) throw new ConflictError('semantic_unavailable', 'semantic activation has not finished yet', { details: { state: 'initializing' } });
    return semantic.queries;
  }

  private listMetrics(args: Arguments, caller: Principal): Record<string, unknown> {
    const vdb = this.vdbOf(args);
    const grants = this.grantsOn(vdb, caller);
    const pkg = visiblePackage(this.semanticQueries().activePackage(vdb), grants);
    return { vdb: vdb.name, version: vdb.version, metrics: pkg.metrics.filter((metric) => metric.accessModifier === 'public').map(metricSummary) };
  }

  private async queryMetrics(args: Arguments, caller: ToolCaller): Promise<Record<string, unknown>> {
    const vdb = this.vdbOf(args);
    const grants = this.grantsOn(vdb, caller.principal);
    const { vdb: _vdb, version: _version, explain, ...body } = args;
    if (explain !== undefined && typeof explain !== 'boolean') throw new InputError('invalid_body', 'explain must be true or false');
    const query = readSemanticQuery(body);
    const queries = this.semanticQueries();
    if (explain === true) return { ...(await queries.explain(vdb, grants, query)) };
    const { requestTimeoutMs: timeoutMs, maxResultBytes } = this.services.config.server;
    return { ...(await queries.run({ vdb, grants, query, timeoutMs, maxResultBytes, signal: caller.signal })), truncated: false };
  }

  private async ask(args: Arguments, caller: ToolCaller): Promise<Record<string, unknown>> {
    const { capability, vdb, goal } = args;
    const missing = [['capability', capability], ['vdb', vdb], ['goal', goal]].filter(([, value]) => value === undefined || value === null).map(([field]) => field as string);
    if (missing.length > 0) throw new InputError('missing_fields', `the arguments lack needed field${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, { details: { missing } });
    if (typeof capability !== 'string' || typeof vdb !== 'string') throw new InputError('invalid_body', 'capability and vdb must be strings');
    const { version } = this.vdbOf({ vdb, version: args['version'] });
    const snapshot = await this.services.tasks.run({ capability, vdb, version, body: { goal }, caller: caller.principal });
    return { ...snapshot };
  }

  private endpointRequest(args: Arguments, caller: ToolCaller): EndpointRequest {
    const { requestTimeoutMs: timeoutMs, maxResultBytes } = this.services.config.server;
    return { fields: args, caller: caller.principal, requestId: caller.requestId, timeoutMs, maxResultBytes, signal: caller.signal };
  }
}

function endpointTool(kind: 'query' | 'action', endpoint: QueryEndpoint | ActionEndpoint): Tool {
  const { vdb } = endpoint.handle;
  const needed = endpoint.neededFields.length > 0 ? `needed fields: ${endpoint.neededFields.join(', ')}` : 'no needed field';
  const own = endpoint.description ? `${endpoint.description.trim()}. ` : '';
  return {
    name: `${kind}_${endpoint.name}`,
    description: `${own}The ${kind} ${endpoint.name} on VDB ${vdb.name} version ${vdb.version} (${needed}), run as the caller.`,
    inputSchema: (kind === 'query' ? fieldsSchema(endpoint.neededFields) : actionSchema(endpoint.neededFields)) as Tool['inputSchema'],
    annotations: kind === 'query'
      ? { title: `Query ${endpoint.name}`, ...READ_ONLY }
      : { title: `Action ${endpoint.name}`, readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  };
}

/** An action's fields, and the key that makes a retried call answer the first run's answer (docs/actions.md). */
function actionSchema(needed: readonly string[]): JsonSchema {
  const schema = fieldsSchema(needed);
  const properties = { ...(schema['properties'] as Record<string, JsonSchema> | undefined), idempotencyKey: IDEMPOTENCY_KEY_PROPERTY };
  return { ...schema, properties };
}

const IDEMPOTENCY_KEY_PROPERTY: JsonSchema = {
  type: 'string',
  description: 'As the Idempotency-Key header of the action route: a retried call with the same key and arguments answers the first run\'s answer without running again',
};

function askTool(config: ServiceConfig): Tool {
  const offered = config.capabilities.map((capability) => `${capability.name}${capability.description ? ` (${capability.description})` : ''}`).join('; ');
  return {
    name: 'ask',
    description: `A task for the service's agent runtime on a VDB: it plans, the service runs each query as the caller. Capabilities: ${offered}.`,
    inputSchema: {
      type: 'object',
      properties: { capability: { type: 'string', enum: config.capabilities.map((capability) => capability.name) }, ...VDB_PROPERTIES, goal: { type: 'string' } },
      required: ['capability', 'vdb', 'goal'],
    },
    // a task may run the actions of its capability: not read-only
    annotations: { title: 'Ask', readOnlyHint: false, openWorldHint: false },
  };
}

/** Rows as a tool answers them: the structured result, and a text rendering of it. */
export function toolResult(outcome: ToolOutcome, tool: string): CallToolResult {
  if (tool === 'ask') return { content: askContent(outcome.structured), structuredContent: outcome.structured };
  return { content: [{ type: 'text', text: JSON.stringify(outcome.structured) }], structuredContent: outcome.structured };
}

/** The snapshot's answer and table artifacts as text, then the snapshot itself. */
function askContent(snapshot: Record<string, unknown>): CallToolResult['content'] {
  const artifacts = (snapshot['artifacts'] ?? []) as { kind: string; content: { contentType: string; data: string } }[];
  const shown = artifacts.filter((artifact) => artifact.kind === 'answer' || artifact.kind === 'table')
    .map((artifact) => ({ type: 'text' as const, text: Buffer.from(artifact.content.data, 'base64').toString('utf8') }));
  return [...shown, { type: 'text', text: JSON.stringify(snapshot) }];
}
