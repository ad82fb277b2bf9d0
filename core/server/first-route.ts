import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response, Route, Server } from 'restify';
import type { Logger } from 'pino';
import { requestFailure } from './http-errors.js';

/**
 * A route a `first` handler serves (restify's hook for work "without the overhead of the restify
 * framework": no request decoration, routing, handler chain or formatter). `pattern` is the restify
 * pattern the same route is also registered under; `match` takes a request only in the plain form the hook
 * serves and leaves every other one (a query string, an encoded name, an unknown name, a blocked start) to
 * that restify route, which answers it as before.
 */
export interface FirstRoute<T> {
  method: string;
  pattern: string;
  match(req: IncomingMessage): T | undefined;
  /**
   * The answer's body, as JSON. restify has not decorated `req`: of its own members only `req.id()` (set
   * by the listener's first hook) may be used; no `params`, `query`, `path()` or `body`.
   */
  handle(req: Request, target: T): Promise<unknown>;
}

/** The restify 12 hook; @types/restify still describes restify 8, which had no `first`. */
export function onFirst(server: Server, handler: (req: Request, res: Response) => boolean): void {
  (server as unknown as { first(handler: (req: Request, res: Response) => boolean): void }).first(handler);
}

/**
 * Serves `route` from restify's `first` chain: the JSON answer, an error through the one mapping every
 * route answers by, and the `after` event (access line, request metrics) as restify emits it for its routes.
 */
export function serveFirst<T>(server: Server, logger: Logger, route: FirstRoute<T>): void {
  const after = { path: route.pattern } as Route;
  onFirst(server, (req, res) => {
    if (req.method !== route.method) return true;
    const target = route.match(req);
    if (target === undefined) return true;
    route.handle(req, target)
      .then((body) => answer(res, server.name, 200, body, undefined))
      // a body that cannot be sent (JSON.stringify throws) fails like the handler: the client gets its 500
      .catch((error: unknown) => {
        const failure = requestFailure(req, error, logger);
        if (!res.headersSent) answer(res, server.name, failure.status, failure.body, failure.headers);
      })
      .then(() => server.emit('after', req, res, after))
      // nothing a request does may end the process: a failure past the answer is logged, not thrown
      .catch((error: unknown) => logger.error({ reqId: req.id(), err: error }, 'request failed after its answer'));
    return false;
  });
}

/** What restify's `res.json` sends: its `Server` header, the JSON text and its length. */
function answer(res: ServerResponse, serverName: string, status: number, body: unknown, headers: Record<string, string> | undefined): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Server', serverName);
  if (headers) for (const name in headers) res.setHeader(name, headers[name] as string);
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
