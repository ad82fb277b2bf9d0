/**
 * The reference runtime as a standalone HTTP server (`npm run runtime`), serving the four runtime routes of
 * docs/runtime/README.md beneath its root. It requires the service's bearer token (`runtime.bearerToken`)
 * on every request. Errors answer a `service-task-error` body.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { configFileFrom, loadConfig, AuthenticationError, ERROR_CATALOG, InputError, messageOf, NotFoundError, PayloadTooLargeError, ServiceError, type RuntimeTaskRef, type RuntimeSnapshot, type TaskErrorEnvelope } from '../../core/plugin-api/index.js';
import { asAdvanceDocument, asStartDocument } from './document-shape.js';
import { ReferenceRuntime } from './reference-runtime.js';

/** Far above any start document the service sends (its `runtime.transportLimitBytes` defaults to 1 MiB). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface ReferenceServerOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** What `Authorization: Bearer` must carry: the service's `runtime.bearerToken`. */
  bearerToken: string;
}

export interface ReferenceServer {
  /** The base URL to configure as the service's `runtime.baseURL`, e.g. `http://127.0.0.1:8383`. */
  url: string;
  /** Stops listening and cuts open connections. */
  close(): Promise<void>;
}

const TASK_ROUTE = /^\/instances\/([^/]+)\/vdbs\/([^/]+)\/versions\/([^/]+)\/tasks\/([^/]+)(\/advances)?$/;

type Operation = 'start' | 'advance' | 'read' | 'cancel';

function routeOf(method: string, path: string): { operation: Operation; ref: RuntimeTaskRef } {
  const unknown = () => new NotFoundError('route_not_found', `no route ${method} ${path}`);
  const match = TASK_ROUTE.exec(path);
  if (!match) throw unknown();
  const operations: Partial<Record<string, Operation>> = match[5] ? { POST: 'advance' } : { PUT: 'start', GET: 'read', DELETE: 'cancel' };
  const operation = operations[method];
  if (!operation) throw unknown();
  try {
    const [instanceId = '', vdb = '', version = '', taskId = ''] = match.slice(1, 5).map((segment) => decodeURIComponent(segment ?? ''));
    return { operation, ref: { instanceId, vdb, version, taskId } };
  } catch {
    throw unknown();
  }
}

/** Compares in constant time; only the length of the token can be learnt, as with any bearer scheme. */
function checkToken(header: string | undefined, expected: Buffer): void {
  const given = Buffer.from(/^Bearer +(\S+) *$/i.exec(header ?? '')?.[1] ?? '', 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AuthenticationError('unauthenticated', 'the reference runtime needs Authorization: Bearer <runtime.bearerToken>');
  }
}

/** The JSON body, refused beyond MAX_BODY_BYTES; the rest of an oversized body is drained so the client reads the 413. */
function readJson(request: IncomingMessage): Promise<unknown> {
  const tooLarge = () => new PayloadTooLargeError('request_too_large', `the body exceeds ${MAX_BODY_BYTES} bytes`);
  if (Number(request.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    request.resume();
    return Promise.reject(tooLarge());
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      if (size > MAX_BODY_BYTES) return reject(tooLarge());
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch {
        reject(new InputError('invalid_json', 'the body is not JSON'));
      }
    });
  });
}

function send(response: ServerResponse, status: number, body: RuntimeSnapshot | TaskErrorEnvelope): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  response.writeHead(status, headers);
  response.end(text);
}

/** A refusal of the request answers with its code's status from the catalog; anything else is a 500 of the runtime. */
function sendError(response: ServerResponse, error: unknown, request: IncomingMessage): void {
  const status = error instanceof ServiceError ? ERROR_CATALOG[error.code].status : 500;
  if (error instanceof ServiceError && status < 500) {
    send(response, status, { format: 'service-task-error', formatVersion: 1, code: error.code, message: error.message, retryable: ERROR_CATALOG[error.code].retryable });
    return;
  }
  // Only our own failures are worth a log line, and their cause stays in it rather than in the answer.
  console.error(`reference runtime: ${request.method} ${request.url}: ${error instanceof Error ? error.stack : messageOf(error)}`);
  // retryable, unlike the service's internal_error: a runtime's 5xx is retried by the service anyway
  send(response, 500, { format: 'service-task-error', formatVersion: 1, code: 'internal_error', message: 'the reference runtime failed', retryable: true });
}

async function answer(runtime: ReferenceRuntime, request: IncomingMessage, expectedToken: Buffer): Promise<RuntimeSnapshot> {
  checkToken(request.headers.authorization, expectedToken);
  const method = request.method ?? 'GET';
  const { operation, ref } = routeOf(method, (request.url ?? '/').split('?')[0] ?? '/');
  switch (operation) {
    case 'start':
      return runtime.start(ref, asStartDocument(await readJson(request)));
    case 'advance':
      return runtime.advance(ref, asAdvanceDocument(await readJson(request)));
    case 'read':
      return runtime.read(ref);
    case 'cancel':
      return runtime.cancel(ref);
  }
}

export async function startReferenceRuntimeServer(options: ReferenceServerOptions): Promise<ReferenceServer> {
  const runtime = new ReferenceRuntime();
  const expectedToken = Buffer.from(options.bearerToken, 'utf8');
  const server = createServer((request, response) => {
    answer(runtime, request, expectedToken).then(
      (snapshot) => send(response, 200, snapshot),
      (error: unknown) => sendError(response, error, request),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** `npm run runtime [-- --config FILE]`: serves at `runtime.reference` of the service's config. */
async function main(): Promise<void> {
  const config = loadConfig(configFileFrom(process.argv.slice(2), process.env));
  const bearerToken = config.runtime.bearerToken;
  if (!bearerToken) {
    console.error('runtime.bearerToken is required for the standalone runtime; set it (e.g. "${env:VDB_RUNTIME_TOKEN}")');
    process.exit(1);
  }
  const server = await startReferenceRuntimeServer({ ...config.runtime.reference, bearerToken });
  console.log(`reference runtime listening on ${server.url}`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void server.close().then(() => process.exit(0)));
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(messageOf(error));
    process.exit(1);
  });
}
