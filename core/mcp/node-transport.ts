/**
 * The SDK's web-standard Streamable HTTP server transport on Node's request and response, without the
 * SDK's own Node wrapper: that one converts each request through @hono/node-server, a general adapter that
 * cost about a tenth of a tool call's CPU here (bench/README.md). The door has read the body already and
 * hands it over parsed, so the `Request` needs no body; a JSON answer is written whole, a stream (a session's
 * GET, an SSE answer) piped as it comes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { WebStandardStreamableHTTPServerTransport, type WebStandardStreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

export class NodeStreamableTransport extends WebStandardStreamableHTTPServerTransport {
  /**
   * The answers the server handed to `send`, by request id, until the HTTP answer that carries them is
   * written: reading the SDK's JSON `Response` back (`text()`, through a web stream) was about a fifth of
   * the SDK's path for a tool call, measured alone on Node 20 (bench/README.md).
   */
  private readonly answers = new Map<RequestId, JSONRPCMessage>();

  constructor(options: WebStandardStreamableHTTPServerTransportOptions) {
    super(options);
  }

  override async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    const id = 'id' in message && !('method' in message) ? message.id : undefined;
    if (id !== undefined) this.answers.set(id, message);
    try {
      await super.send(message, options);
    } catch (error) {
      if (id !== undefined) this.answers.delete(id);
      throw error;
    }
  }

  /**
   * Answers `req` on `res`. The `Request` gets no signal (undici's following of one costs more than the rest of
   * the conversion): a stream ends when `res` closes, which cancels the web stream piped into it.
   */
  async handleNode(req: IncomingMessage, res: ServerResponse, parsedBody: unknown, authInfo: AuthInfo): Promise<void> {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === 'string') headers.set(name, value);
      else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    }
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers });
    const ids = requestIds(parsedBody);
    try {
      const response = await this.handleRequest(request, { parsedBody, authInfo });
      res.statusCode = response.status;
      response.headers.forEach((value, name) => res.setHeader(name, value));
      if (response.body === null) {
        res.end();
        return;
      }
      if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
        const text = (response.status === 200 ? this.answerOf(ids) : undefined) ?? await response.text();
        res.setHeader('Content-Length', Buffer.byteLength(text));
        res.end(text);
        return;
      }
      res.flushHeaders();
      Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
    } finally {
      for (const id of ids) this.answers.delete(id);
    }
  }

  /**
   * The JSON the SDK's `Response` holds when it answers these requests (one answer alone, several as an
   * array, in the order of the requests); undefined when it answers something else (a refusal of the
   * transport's own), which is then read from the `Response`.
   */
  private answerOf(ids: readonly RequestId[]): string | undefined {
    const answers: JSONRPCMessage[] = [];
    for (const id of ids) {
      const answer = this.answers.get(id);
      if (answer === undefined) return undefined;
      answers.push(answer);
    }
    if (answers.length === 0) return undefined;
    return JSON.stringify(answers.length === 1 ? answers[0] : answers);
  }
}

/** The ids of the requests (messages with a method and an id) of a POST body, each once. */
function requestIds(body: unknown): RequestId[] {
  const ids = new Set<RequestId>();
  for (const message of Array.isArray(body) ? body : [body]) {
    const { method, id } = (message ?? {}) as { method?: unknown; id?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) ids.add(id);
  }
  return [...ids];
}
