/**
 * The MCP endpoint (docs/mcp.md) on the main listener: the SDK's Streamable HTTP transport at `mcp.path`
 * (POST, GET for a session's stream, DELETE to end a session) and the RFC 9728 protected resource metadata.
 * Served from restify's `first` hook, as the query route is: the transport reads and answers the raw
 * request itself. Before it does, the door checks the `Host` and `Origin` (DNS rebinding), authenticates the
 * request with the configured scheme and, for a session, checks it belongs to that caller.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Route, Server } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import type { McpConfig, ServiceConfig } from '../config/config-types.js';
import type { ServiceMetrics } from '../observe/service-metrics.js';
import { CredentialError, type AuthScheme, type Principal } from '../plugin-api/auth-scheme.js';
import { ForbiddenError, InputError, UnavailableError } from '../plugin-api/errors.js';
import { CORE_VERSION } from '../plugins/manifest-validation.js';
import { CredentialRefusal } from '../server/authentication.js';
import { readBody } from '../server/body-parsing.js';
import { onFirst } from '../server/first-route.js';
import { toHttpFailure, type ErrorBody } from '../server/http-errors.js';
import { requestSignal } from '../server/request-signal.js';
import type { RouteModule } from '../server/route-module.js';
import { startupBlocked } from '../server/startup-gate.js';
import { coreTokens } from '../service-tokens.js';
import { DirectCalls, directCallOf, writeAnswer, type DirectCall } from './direct-tool-call.js';
import { authInfoOf, callerOfAuth, createMcpServer, McpToolCalls, type McpCaller, type McpServerDeps } from './mcp-server.js';
import { McpSessions, type McpSessionEntry } from './mcp-sessions.js';
import { McpTools } from './mcp-tools.js';
import { NodeStreamableTransport } from './node-transport.js';
import type { McpServices } from './mcp-services.js';

const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
const SESSION_HEADER = 'mcp-session-id';

/** The JSON-RPC methods counted by name; any other is counted as `other`, so the series stay few. */
const METHODS = new Set([
  'initialize', 'notifications/initialized', 'ping', 'tools/list', 'tools/call', 'resources/list', 'resources/templates/list', 'resources/read',
  'notifications/cancelled', 'prompts/list', 'logging/setLevel', 'completion/complete',
]);

export const mcpRoutes: RouteModule = {
  name: 'mcp',
  listener: 'main',
  register(server, container) {
    const door = new McpDoor(server, container);
    const { path } = door.config;
    onFirst(server, (req, res) => {
      const target = pathOf(req.url);
      if (target === path) {
        door.serve(req, res);
        return false;
      }
      if (target === PROTECTED_RESOURCE_PATH || target === `${PROTECTED_RESOURCE_PATH}${path}`) {
        door.metadata(req, res);
        return false;
      }
      return true;
    });
  },
};

class McpDoor {
  readonly config: McpConfig;
  private readonly service: ServiceConfig;
  private readonly scheme: AuthScheme;
  private readonly metrics: ServiceMetrics;
  private readonly deps: McpServerDeps;
  private readonly sessions: McpSessions;
  /** The tool calls the door answers itself (direct-tool-call.ts). */
  private readonly calls: McpToolCalls;
  private readonly blocked: () => boolean;
  private readonly after: Route;
  /** The listener is bound to a loopback address: only a loopback `Host` can be meant for it. */
  private readonly loopback: boolean;
  /** The names a `Host` may give besides addresses and loopback names: `mcp.allowedHosts`, `mcp.allowedOrigins`' hosts, this machine's name. */
  private readonly allowedHosts: ReadonlySet<string>;

  constructor(private readonly server: Server, container: DependencyContainer) {
    this.service = container.resolve(coreTokens.config);
    this.config = this.service.mcp;
    this.scheme = container.resolve(coreTokens.authScheme);
    this.metrics = container.resolve(coreTokens.metrics);
    const logger = container.resolve(coreTokens.logger);
    const services: McpServices = {
      config: this.service,
      vdbs: container.resolve(coreTokens.vdbs),
      handles: container.resolve(coreTokens.vdbHandles),
      endpoints: container.resolve(coreTokens.endpoints),
      tasks: container.resolve(coreTokens.tasks),
      semantic: () => (container.isRegistered(coreTokens.semanticQueries, true)
        ? { registry: container.resolve(coreTokens.semantic), queries: container.resolve(coreTokens.semanticQueries) }
        : undefined),
    };
    this.deps = { services, metrics: this.metrics, logger, version: CORE_VERSION };
    this.sessions = new McpSessions(this.config.maxSessions);
    this.calls = new McpToolCalls(new McpTools(services), this.metrics, logger);
    this.blocked = startupBlocked(container);
    this.after = { path: this.config.path } as Route;
    this.loopback = isLoopback(this.service.server.host);
    this.allowedHosts = new Set([...this.config.allowedHosts, ...this.config.allowedOrigins.map((origin) => new URL(origin).hostname), ...(this.loopback ? [] : [hostname()])]
      .map((name) => name.toLowerCase()));
  }

  serve(req: IncomingMessage, res: ServerResponse): void {
    // the access line and the request metrics, as restify emits them for its own routes
    res.once('close', () => this.server.emit('after', req, res, this.after));
    this.handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) this.fail(req, res, error);
      else this.deps.logger.error({ err: error }, 'MCP request failed after its answer began');
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (this.blocked()) {
      throw new UnavailableError('startup_blocked', 'the service did not start: a semantic model whose policy is blockStartup failed to activate; see GET /api/v1/admin/semantic/vdbs');
    }
    this.checkOrigin(req);
    if (this.crossOrigin(req, res)) return;
    const principal = await this.authenticate(req);
    const caller: McpCaller = { principal, requestId: String(res.getHeader('x-request-id') ?? ''), signal: requestSignal(req) };
    const auth = authInfoOf(caller);

    const sessionId = req.headers[SESSION_HEADER];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session) {
        this.metrics.mcpRequest('unknown_session');
        jsonRpcError(res, 404, -32001, 'Session not found');
        return;
      }
      if (session.owner !== ownerOf(principal)) throw new ForbiddenError('forbidden', 'the MCP session belongs to another caller');
      const body = req.method === 'POST' ? await this.readMessages(req, res) : undefined;
      if (body === null) return;
      this.count(req, body);
      const direct = directCallOf(req, body);
      await (direct ? this.answer(res, direct, caller, { id: sessionId, entry: session }) : session.transport.handleNode(req, res, body, auth));
      return;
    }
    if (req.method !== 'POST') {
      this.metrics.mcpRequest('other');
      res.setHeader('Allow', 'POST');
      jsonRpcError(res, 405, -32000, 'Method not allowed: GET and DELETE need an Mcp-Session-Id (a stateless client only POSTs)');
      return;
    }
    const body = await this.readMessages(req, res);
    if (body === null) return;
    this.count(req, body);
    const direct = directCallOf(req, body);
    if (direct) {
      await this.answer(res, direct, caller);
      return;
    }
    const initializes = Array.isArray(body) ? body.some(isInitialize) : isInitialize(body);
    await (initializes ? this.openSession(req, res, body, auth) : this.stateless(req, res, body, auth));
  }

  /**
   * A lone `tools/call` answered here (direct-tool-call.ts) with the handler the SDK's server calls. As the
   * SDK's protocol does, a call aborted (cancelled in its session, or its client gone) is not answered.
   */
  private async answer(res: ServerResponse, call: DirectCall, caller: McpCaller, session?: { id: string; entry: McpSessionEntry }): Promise<void> {
    const running = session?.entry.calls.start(call.id, res, caller.signal);
    const signal = running?.signal ?? caller.signal;
    try {
      const result = await this.calls.call(call.name, call.args, caller, signal);
      if (!signal.aborted) writeAnswer(res, call.id, result, session?.id);
    } finally {
      if (running) session?.entry.calls.finish(call.id, running);
    }
  }

  /** An `initialize` without a session: a session of this caller's, its id in the answer's `Mcp-Session-Id`. */
  private async openSession(req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo): Promise<void> {
    const mcp = createMcpServer(this.deps);
    const owner = ownerOf(callerOfAuth(auth).principal);
    const calls = new DirectCalls();
    const transport: NodeStreamableTransport = new NodeStreamableTransport({
      sessionIdGenerator: randomUUID,
      enableJsonResponse: true,
      onsessioninitialized: (id) => this.sessions.add(id, { transport, owner, calls }),
      onsessionclosed: (id) => this.sessions.remove(id),
    });
    transport.onclose = () => {
      calls.abortAll();
      if (transport.sessionId !== undefined) this.sessions.remove(transport.sessionId);
    };
    // the server's protocol calls this first with each message the transport took: its cancellations
    transport.onmessage = (message) => calls.observe(message);
    await mcp.connect(transport);
    await transport.handleNode(req, res, body, auth);
    // an initialize the transport refused opened no session: nothing to keep
    if (transport.sessionId === undefined) await mcp.close();
  }

  /**
   * A request without a session: a server and transport of its own, left to the collector once answered
   * (nothing of theirs runs on: closing them built an error per request), closed when the client went away
   * before its answer, which stops the handlers still running.
   */
  private async stateless(req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo): Promise<void> {
    const mcp = createMcpServer(this.deps);
    const transport = new NodeStreamableTransport({ enableJsonResponse: true });
    res.once('close', () => {
      if (!res.writableFinished) void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleNode(req, res, body, auth);
  }

  /** The POST body as JSON, within `server.maxBodyBytes`; null when malformed JSON was already answered. */
  private async readMessages(req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    try {
      return await readBody(req, this.service.server.maxBodyBytes);
    } catch (error) {
      if (!(error instanceof InputError) || error.code !== 'invalid_body') throw error;
      this.metrics.mcpRequest('parse_error');
      jsonRpcError(res, 400, -32700, `Parse error: ${error.message}`);
      return null;
    }
  }

  private count(req: IncomingMessage, body: unknown): void {
    if (req.method !== 'POST') {
      this.metrics.mcpRequest(req.method === 'GET' ? 'stream' : req.method === 'DELETE' ? 'session_end' : 'other');
      return;
    }
    for (const message of Array.isArray(body) ? body : [body]) {
      const method = (message as { method?: unknown } | null)?.method;
      this.metrics.mcpRequest(typeof method === 'string' && METHODS.has(method) ? method : 'other');
    }
  }

  /**
   * DNS rebinding: a page of another site that resolves its name to this host sends its own name as `Host`
   * and `Origin`, same-origin to the browser, so the `Host` decides. Taken: a loopback name, an allowed name,
   * and, unless the listener is loopback only, any address (no page can rebind a name it does not own to an
   * address). An `Origin` must be the endpoint's own or one of `mcp.allowedOrigins`; no `Origin` is a client
   * that is no browser.
   */
  private checkOrigin(req: IncomingMessage): void {
    const host = req.headers.host ?? '';
    const name = hostnameOf(host).toLowerCase();
    if (!isLoopback(name) && !this.allowedHosts.has(name) && (this.loopback || isIP(name) === 0)) {
      throw new ForbiddenError('forbidden', `the MCP endpoint does not answer for host ${JSON.stringify(host)} (mcp.allowedHosts)`);
    }
    const allowed = this.config.allowedOrigins;
    const origin = req.headers.origin;
    if (origin === undefined || allowed.includes(origin) || origin === `http://${host}` || origin === `https://${host}`) return;
    throw new ForbiddenError('forbidden', `origin ${JSON.stringify(origin)} is not allowed (mcp.allowedOrigins)`);
  }

  /**
   * CORS for a page of an allowed origin: its answers may be read (with the session id and the challenge),
   * and its preflight (`OPTIONS`, sent without credentials) is answered here; true when it was.
   */
  private crossOrigin(req: IncomingMessage, res: ServerResponse): boolean {
    const origin = req.headers.origin;
    if (origin !== undefined && this.config.allowedOrigins.includes(origin)) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, WWW-Authenticate');
    }
    if (req.method !== 'OPTIONS') return false;
    res.statusCode = 204;
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
    res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID');
    res.setHeader('Access-Control-Max-Age', '600');
    res.end();
    return true;
  }

  private async authenticate(req: IncomingMessage): Promise<Principal> {
    try {
      return await this.scheme.authenticate(req.headers);
    } catch (error) {
      if (!(error instanceof CredentialError)) throw error;
      throw new CredentialRefusal(this.scheme.challenge, error);
    }
  }

  /** An error before the transport: the service's status and body, the 401 with its resource metadata. */
  private fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    const failure = toHttpFailure(error, 'standard');
    if (failure.serverSide) this.deps.logger.error({ err: error }, 'MCP request failed');
    res.statusCode = failure.status;
    for (const [name, value] of Object.entries(failure.headers)) res.setHeader(name, value);
    if (error instanceof CredentialRefusal) {
      res.setHeader('WWW-Authenticate', `${error.challengeFor((failure.body as ErrorBody).code)}, resource_metadata="${baseOf(req)}${PROTECTED_RESOURCE_PATH}"`);
    }
    sendJson(res, failure.body);
  }

  /** RFC 9728: the resource this endpoint is, and (JWT scheme) the issuer that gives its tokens. */
  metadata(req: IncomingMessage, res: ServerResponse): void {
    res.once('close', () => this.server.emit('after', req, res, { path: PROTECTED_RESOURCE_PATH } as Route));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET');
      sendJson(res, toHttpFailure({ statusCode: 405 }, 'standard').body);
      return;
    }
    const issuer = this.service.auth.settings['issuer'];
    sendJson(res, {
      resource: `${baseOf(req)}${this.config.path}`,
      ...(typeof issuer === 'string' && { authorization_servers: [issuer] }),
      bearer_methods_supported: ['header'],
      resource_name: 'vdb-service',
    });
  }
}

/**
 * The SDK's `isInitializeRequest` is a zod parse, and a failed parse (every message but an `initialize`)
 * builds an error, about 10 µs on Node 20 (bench/README.md). Only a message named `initialize` is parsed.
 */
function isInitialize(message: unknown): boolean {
  return (message as { method?: unknown } | null)?.method === 'initialize' && isInitializeRequest(message);
}

function ownerOf(principal: Principal): string {
  return `${principal.scheme}\u0000${principal.subject}`;
}

function pathOf(url: string | undefined): string {
  const query = url?.indexOf('?') ?? -1;
  return query < 0 ? (url ?? '') : (url as string).slice(0, query);
}

function hostnameOf(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon < 0 ? host : host.slice(0, colon);
}

function isLoopback(hostname: string): boolean {
  if (hostname === 'localhost' || hostname === '::1') return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

function baseOf(req: IncomingMessage): string {
  return `http://${req.headers.host ?? 'localhost'}`;
}

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.statusCode = status;
  sendJson(res, { jsonrpc: '2.0', error: { code, message }, id: null });
}
