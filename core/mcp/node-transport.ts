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

export class NodeStreamableTransport extends WebStandardStreamableHTTPServerTransport {
  constructor(options: WebStandardStreamableHTTPServerTransportOptions) {
    super(options);
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
    const response = await this.handleRequest(request, { parsedBody, authInfo });
    res.statusCode = response.status;
    response.headers.forEach((value, name) => res.setHeader(name, value));
    if (response.body === null) {
      res.end();
      return;
    }
    if ((response.headers.get('content-type') ?? '').startsWith('application/json')) {
      const text = await response.text();
      res.setHeader('Content-Length', Buffer.byteLength(text));
      res.end(text);
      return;
    }
    res.flushHeaders();
    Readable.fromWeb(response.body as import('node:stream/web').ReadableStream).pipe(res);
  }
}
