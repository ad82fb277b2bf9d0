/**
 * A scriptable agent runtime on a real HTTP port, for tests of the `http` transport and of the Task API.
 *
 * ```ts
 * const fake = await FakeRuntime.start({ requireToken: 'service-token-0123456789' });
 * // runtime: { transport: http, baseURL: fake.url, bearerToken: 'service-token-0123456789' }
 * fake.script = [{ kind: 'working', actions: 2 }, { kind: 'status', status: 500 }, { kind: 'ok' }];
 * ... // each runtime call consumes one step; then `fake.fallback` answers (default `{ kind: 'ok' }`)
 * fake.requests;   // every request: operation, method, path, ref, headers, parsed body
 * await fake.close();
 * ```
 *
 * Routes (beneath `url`): PUT `instances/{i}/vdbs/{v}/versions/{ver}/tasks/{id}` (start), POST `.../advances`
 * (advance), GET `.../tasks/{id}` (read), DELETE `.../tasks/{id}` (cancel). Anything else is 404 and
 * consumes no step; so does a 401 for a missing or wrong token when `requireToken` is set.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RuntimeTaskRef } from '../../../core/plugin-api/runtime-transport.js';
import type { PendingAction, RuntimeSnapshot } from '../../../core/plugin-api/task-documents.js';

export type FakeOperation = 'start' | 'advance' | 'read' | 'cancel';

/** One request the fake received, in arrival order. */
export interface FakeRequest {
  /** Undefined for a path or method that is no runtime route. */
  operation: FakeOperation | undefined;
  method: string;
  /** Beneath `basePath`, percent-encoding kept, e.g. `/instances/i1/vdbs/sales%2Feu/versions/1/tasks/t1`. */
  path: string;
  /** The decoded path segments; undefined for an unknown route. */
  ref: RuntimeTaskRef | undefined;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty. */
  body: unknown;
}

/** A request to a runtime route: its ref is known. */
export type FakeRouteRequest = FakeRequest & { operation: FakeOperation; ref: RuntimeTaskRef };

/** How the fake answers one runtime call. */
export type FakeStep =
  /** 200 with `snapshot`, or by default {@link snapshotFor} the request's task (`cancelled` for cancel, else `completed`). */
  | { kind: 'ok'; snapshot?: RuntimeSnapshot | ((request: FakeRouteRequest) => RuntimeSnapshot) }
  /**
   * 200 `working` with `actions` pending queries (default 1), ids `r<n>a<k>` fresh on every answer. As the
   * fallback it never finishes; `{ kind: 'working', actions: 1000, maxRows: 1e9 }` asks far beyond any budget.
   */
  | { kind: 'working'; actions?: number; maxRows?: number; sql?: string }
  /** That status (4xx, 5xx) with a small JSON body that is no snapshot. */
  | { kind: 'status'; status: number }
  /**
   * Any JSON body, status 200 unless given: for wrong task ids, huge bodies, hand-made documents.
   * `chunked` leaves out Content-Length, so the client learns the size only by reading.
   */
  | { kind: 'json'; body: unknown; status?: number; chunked?: boolean }
  /** 200 with a snapshot missing required fields and with an unknown state. */
  | { kind: 'malformed' }
  /** Never answers; the connection stays open until the client gives up or the fake closes. */
  | { kind: 'hang' }
  /** Destroys the connection without an answer: a network error for the client. */
  | { kind: 'drop' };

export interface FakeRuntimeOptions {
  /** Path the routes live beneath, e.g. `/runtime`; default none. */
  basePath?: string;
  /** When set, requests without `Authorization: Bearer <token>` get 401, as the reference runtime does. */
  requireToken?: string;
}

/** A valid snapshot of `ref`: `completed` with one `answer` artifact and zero usage, unless overridden. */
export function snapshotFor(ref: RuntimeTaskRef, overrides: Partial<RuntimeSnapshot> = {}): RuntimeSnapshot {
  return {
    format: 'service-task-snapshot',
    formatVersion: 1,
    task: { taskId: ref.taskId, target: { instanceId: ref.instanceId, vdbName: ref.vdb, vdbVersion: ref.version } },
    capability: 'answer',
    state: 'completed',
    artifacts: [{ id: 'answer', kind: 'answer', content: { contentType: 'text/markdown', data: Buffer.from('fake answer').toString('base64') } }],
    usage: { inputTokens: 0, outputTokens: 0, modelCalls: 0 },
    stop: { reason: 'completed', detail: 'the fake runtime answered' },
    pendingActions: [],
    ...overrides,
  };
}

/** `count` pending queries with ids `<prefix>1..<prefix>count`. */
export function pendingActions(count: number, options: { maxRows?: number; sql?: string; prefix?: string } = {}): PendingAction[] {
  return Array.from({ length: count }, (_, index) => ({
    actionId: `${options.prefix ?? 'a'}${index + 1}`,
    kind: 'query',
    sql: options.sql ?? 'SELECT 1 AS one',
    maxRows: options.maxRows ?? 100,
  }));
}

const TASK_ROUTE = /^\/instances\/([^/]+)\/vdbs\/([^/]+)\/versions\/([^/]+)\/tasks\/([^/]+)(\/advances)?$/;

function routeOf(method: string, path: string): { operation: FakeOperation; ref: RuntimeTaskRef } | undefined {
  const match = TASK_ROUTE.exec(path);
  if (!match) return undefined;
  const [, instanceId = '', vdb = '', version = '', taskId = '', advances] = match;
  const ref = { instanceId: decodeURIComponent(instanceId), vdb: decodeURIComponent(vdb), version: decodeURIComponent(version), taskId: decodeURIComponent(taskId) };
  const operation: FakeOperation | undefined = advances
    ? (method === 'POST' ? 'advance' : undefined)
    : ({ PUT: 'start', GET: 'read', DELETE: 'cancel' } as const)[method as 'PUT' | 'GET' | 'DELETE'];
  return operation ? { operation, ref } : undefined;
}

async function bodyOf(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export class FakeRuntime {
  /** Steps consumed in order, one per runtime call. */
  script: FakeStep[] = [];
  /** Answers every call once the script is used up. */
  fallback: FakeStep = { kind: 'ok' };
  /** Every request received, routes or not. */
  readonly requests: FakeRequest[] = [];
  /** Counts `working` answers, so that each has its own action ids (`r1a1`, `r2a1`, ...). */
  private rounds = 0;

  private constructor(
    private readonly server: Server,
    /** The base URL to configure as `runtime.baseURL`, e.g. `http://127.0.0.1:41234/runtime`. */
    readonly url: string,
    private readonly options: FakeRuntimeOptions,
  ) {}

  static async start(options: FakeRuntimeOptions = {}): Promise<FakeRuntime> {
    let fake: FakeRuntime | undefined;
    const server = createServer((request, response) => {
      // A client that gives up while sending its body leaves nothing to answer.
      fake?.handle(request, response).catch(() => response.destroy());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeRuntime(server, `http://127.0.0.1:${port}${options.basePath ?? ''}`, options);
    return fake;
  }

  /** The recorded requests to runtime routes, optionally of one operation. */
  calls(operation?: FakeOperation): FakeRouteRequest[] {
    return this.requests.filter((request): request is FakeRouteRequest =>
      request.operation !== undefined && (operation === undefined || request.operation === operation));
  }

  /** Forgets requests and script; the fallback answers `ok` again. */
  reset(): void {
    this.requests.length = 0;
    this.script = [];
    this.fallback = { kind: 'ok' };
  }

  /** Stops listening and cuts every connection, hanging ones included. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const fullPath = (request.url ?? '/').split('?')[0] ?? '/';
    const base = this.options.basePath ?? '';
    const path = fullPath.startsWith(base) ? fullPath.slice(base.length) : fullPath;
    const route = fullPath.startsWith(base) ? routeOf(method, path) : undefined;
    const recorded: FakeRequest = { operation: route?.operation, method, path, ref: route?.ref, headers: request.headers, body: await bodyOf(request) };
    this.requests.push(recorded);
    if (!route) return this.send(response, 404, { error: 'not a runtime route' });
    const token = this.options.requireToken;
    if (token !== undefined && request.headers.authorization !== `Bearer ${token}`) {
      response.setHeader('WWW-Authenticate', 'Bearer');
      return this.send(response, 401, { error: 'unauthenticated' });
    }
    this.answer(this.script.shift() ?? this.fallback, recorded as FakeRouteRequest, response);
  }

  private answer(step: FakeStep, request: FakeRouteRequest, response: ServerResponse): void {
    switch (step.kind) {
      case 'ok': {
        const snapshot = typeof step.snapshot === 'function' ? step.snapshot(request) : step.snapshot ?? this.defaultSnapshot(request);
        return this.send(response, 200, snapshot);
      }
      case 'working': {
        this.rounds += 1;
        const actions = pendingActions(step.actions ?? 1, { maxRows: step.maxRows, sql: step.sql, prefix: `r${this.rounds}a` });
        return this.send(response, 200, snapshotFor(request.ref, { capability: this.capabilityOf(request), state: 'working', artifacts: [], stop: null, pendingActions: actions }));
      }
      case 'status':
        return this.send(response, step.status, { error: `scripted status ${step.status}` });
      case 'json':
        return this.send(response, step.status ?? 200, step.body, step.chunked);
      case 'malformed':
        return this.send(response, 200, { format: 'service-task-snapshot', formatVersion: 1, state: 'thinking' });
      case 'hang':
        return;
      case 'drop':
        response.socket?.destroy();
        return;
    }
  }

  private defaultSnapshot(request: FakeRouteRequest): RuntimeSnapshot {
    const capability = this.capabilityOf(request);
    if (request.operation !== 'cancel') return snapshotFor(request.ref, { capability });
    return snapshotFor(request.ref, { capability, state: 'cancelled', stop: { reason: 'cancelled', detail: 'cancelled by the service' } });
  }

  /** The capability the task was started with, from its start document; `answer` when unknown. */
  private capabilityOf(request: FakeRouteRequest): string {
    const start = this.calls('start').find((call) => call.ref.taskId === request.ref.taskId);
    const capability = (start?.body as { capability?: unknown } | undefined)?.capability;
    return typeof capability === 'string' ? capability : 'answer';
  }

  private send(response: ServerResponse, status: number, body: unknown, chunked = false): void {
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': Buffer.byteLength(text) }) });
    response.end(text);
  }
}
