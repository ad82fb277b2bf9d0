/**
 * One MCP server (the SDK's low-level `Server`) over the service's tools and resources. A session keeps
 * one; a stateless request gets its own. Who calls comes with each request (`authInfo`), never from the
 * server: every request is authenticated again, and a session is bound to its caller by the door.
 */
import type { Logger } from 'pino';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { getParseErrorMessage, safeParse, type AnyObjectSchema, type SchemaOutput } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import {
  CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError,
  ReadResourceRequestSchema, RequestSchema, type CallToolRequest, type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ServiceMetrics } from '../observe/service-metrics.js';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { ServiceError } from '../plugin-api/errors.js';
import { toHttpFailure, type ErrorBody } from '../server/http-errors.js';
import { McpResources } from './mcp-resources.js';
import type { McpServices } from './mcp-services.js';
import { McpTools, toolResult } from './mcp-tools.js';

/** The caller of one MCP request, as the door hands it to the request's handlers (the SDK's `authInfo.extra`). */
export interface McpCaller {
  principal: Principal;
  requestId: string;
  /** Aborted when the HTTP client has gone away. */
  signal: AbortSignal;
}

/** The SDK's `authInfo` of a request: the caller the handlers read; the credential itself is not kept. */
export function authInfoOf(caller: McpCaller): AuthInfo {
  return { token: '', clientId: caller.principal.subject, scopes: [], extra: { caller } };
}

export function callerOfAuth(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.['caller'] as McpCaller | undefined;
  // the door authenticates every request before the transport sees it
  if (!caller) throw new McpError(ErrorCode.InternalError, 'unauthenticated request');
  return caller;
}

export interface McpServerDeps {
  services: McpServices;
  metrics: ServiceMetrics;
  logger: Logger;
  version: string;
}

/**
 * One JSON Schema validator for every server: the SDK's default builds an Ajv instance per server, which was
 * about a tenth of a stateless request's CPU (bench/README.md).
 */
const validator = new AjvJsonSchemaValidator();

export function createMcpServer({ services, metrics, logger, version }: McpServerDeps): Server {
  const server = new Server(
    { name: 'vdb-service', version },
    {
      jsonSchemaValidator: validator,
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      instructions: 'Governed virtual databases: every tool runs as the caller, within its data roles. Start with list_vdbs, then describe_vdb.',
    },
  );
  const tools = new McpTools(services);
  const resources = new McpResources(services, tools);
  const calls = new McpToolCalls(tools, metrics, logger);

  server.setRequestHandler(ANY_PARAMS.listTools, (request, extra) => {
    paramsOf(ListToolsRequestSchema, request);
    return { tools: tools.list(callerOfAuth(extra.authInfo).principal) };
  });

  server.setRequestHandler(ANY_PARAMS.callTool, async (loose, extra): Promise<CallToolResult> => {
    // the SDK's own tools/call wrapper has checked the request against its schema, answering -32602 when it failed
    const { name, arguments: args } = (loose as CallToolRequest).params;
    const caller = callerOfAuth(extra.authInfo);
    return calls.call(name, args ?? {}, caller, AbortSignal.any([extra.signal, caller.signal]));
  });

  server.setRequestHandler(ANY_PARAMS.listResources, (request, extra) => {
    paramsOf(ListResourcesRequestSchema, request);
    return { resources: resources.list(callerOfAuth(extra.authInfo).principal) };
  });
  server.setRequestHandler(ANY_PARAMS.listResourceTemplates, (request) => {
    paramsOf(ListResourceTemplatesRequestSchema, request);
    return { resourceTemplates: resources.templates() };
  });
  server.setRequestHandler(ANY_PARAMS.readResource, (request, extra) => {
    const { uri } = paramsOf(ReadResourceRequestSchema, request).params;
    try {
      return resources.read(uri, callerOfAuth(extra.authInfo).principal);
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      // a resource the caller may not see does not exist for it (§8: nothing outside its grants, by name either)
      throw new McpError(RESOURCE_NOT_FOUND, `${error.code}: ${error.message}`);
    }
  });
  return server;
}

/**
 * A `tools/call` answered: the tool's result, or a refusal or failure as an `isError` result; counted and
 * logged once. The SDK's handler calls it, and so does the door's own answer to a lone `tools/call`
 * (direct-tool-call.ts), so both answer alike.
 */
export class McpToolCalls {
  constructor(private readonly tools: McpTools, private readonly metrics: ServiceMetrics, private readonly logger: Logger) {}

  /** `signal` aborts the call: the client went away, or cancelled it. */
  async call(name: string, args: Readonly<Record<string, unknown>>, caller: McpCaller, signal: AbortSignal): Promise<CallToolResult> {
    const started = Date.now();
    let outcome: 'ok' | 'error' | 'cancelled' = 'ok';
    let body: ErrorBody | undefined;
    try {
      return toolResult(await this.tools.call(name, args, { principal: caller.principal, requestId: caller.requestId, signal }), name);
    } catch (error) {
      // its client cancelled it or went away: the database's 57014 is no timeout, and nothing of the service's failed
      outcome = signal.aborted ? 'cancelled' : 'error';
      const failure = toHttpFailure(error, 'standard');
      body = failure.body as ErrorBody;
      if (failure.serverSide && outcome === 'error') this.logger.error({ reqId: caller.requestId, tool: name, err: error }, 'tool call failed');
      return errorResult(body);
    } finally {
      // names are the client's: an unknown one is counted as `unknown`, so the series stay as many as the tools
      const label = this.tools.offers(name) ? name : 'unknown';
      this.metrics.mcpToolCall(label, outcome);
      this.logger.info({ reqId: caller.requestId, tool: label, outcome, ...(body && outcome === 'error' && { code: body.code }), ms: Date.now() - started }, 'mcp tool call');
    }
  }
}

/**
 * A method's schema that takes any params object. The SDK parses a request with the schema a handler was
 * registered with before calling it, and answers a failure -32603, an internal error (its issue #2284); so
 * handlers are registered with this one and read their params with `paramsOf`, and a client that sent bad
 * params is told -32602 (invalid params), as JSON-RPC has it.
 */
function anyParams<T extends typeof ListToolsRequestSchema | typeof CallToolRequestSchema | typeof ListResourcesRequestSchema
  | typeof ListResourceTemplatesRequestSchema | typeof ReadResourceRequestSchema>(schema: T) {
  return schema.extend({ params: RequestSchema.shape.params });
}

/** Made once: extending a schema costs, and a stateless request makes a server of its own. */
const ANY_PARAMS = {
  listTools: anyParams(ListToolsRequestSchema),
  callTool: anyParams(CallToolRequestSchema),
  listResources: anyParams(ListResourcesRequestSchema),
  listResourceTemplates: anyParams(ListResourceTemplatesRequestSchema),
  readResource: anyParams(ReadResourceRequestSchema),
};

function paramsOf<T extends AnyObjectSchema>(schema: T, request: unknown): SchemaOutput<T> {
  const parsed = safeParse(schema, request);
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${getParseErrorMessage(parsed.error)}`);
  return parsed.data;
}

/** The MCP specification's code for an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A refusal or failure as a tool result: the service's code and message, the denial when HTTP gives one. Its
 * keys in the order of the SDK's result schema, whose parse on the SDK's path writes them so: the door's
 * direct answer is then the same JSON.
 */
function errorResult(body: ErrorBody): CallToolResult {
  const denial = body.details['denial'];
  const text = `${body.code}: ${body.message}${typeof denial === 'string' ? ` (denial: ${denial})` : ''}`;
  return { content: [{ type: 'text', text }], structuredContent: { error: { ...body } }, isError: true };
}
