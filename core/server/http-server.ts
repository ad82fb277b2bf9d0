import { randomUUID } from 'node:crypto';
import { isIPv6, type AddressInfo } from 'node:net';
import restify, { type Request, type Response, type Server } from 'restify';
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import type { ServerConfig } from '../config/config-types.js';
import { requestFailure } from './http-errors.js';
import { ListenFailure, type ListenerKey } from './listen-failure.js';
import { onFirst } from './first-route.js';
import { elapsedMs, markStarted } from './request-context.js';
import type { RouteModule } from './route-module.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function createRestifyServer(name: string, config: ServerConfig, logger: Logger): Server {
  // @types/restify still describes restify 8 (bunyan logger); restify 12 takes pino.
  const server = restify.createServer({ name, log: logger as unknown as restify.ServerOptions['log'], handleUncaughtExceptions: false });
  server.server.requestTimeout = config.requestTimeoutMs;
  // Node's default, 5 s, is shorter than the idle time of the clients that reuse connections (proxies and load
  // balancers 60 s, Go 90 s, Python and Node's http.Agent no limit): one that sends as the server closes gets a reset
  server.server.keepAliveTimeout = config.keepAliveTimeoutMs;
  // A `first` handler runs synchronously as the request arrives, outside restify's handler chain (no turn of
  // the event loop, no handler timers).
  onFirst(server, (req, res) => {
    markStarted(req);
    // A caller's id is kept only when it is a plain token, so it can go into logs and headers as it is.
    const given = req.headers['x-request-id'];
    // restify 12's req.id(value) sets the id once; @types/restify only knows the getter.
    res.setHeader('x-request-id', (req as unknown as { id(value: string): string }).id(typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()));
    return true;
  });
  server.on('restifyError', (req: Request, res: Response, error: unknown, callback: () => void) => {
    const failure = requestFailure(req, error, logger);
    if (!res.headersSent) {
      for (const [name, value] of Object.entries(failure.headers)) res.header(name, value);
      res.status(failure.status);
      res.json(failure.body);
    }
    callback();
  });
  // The access line's fields are fixed and hold no secret: skip the redaction walk (about 8 µs a line).
  const accessLog = logger.child({}, { redact: { paths: [] } });
  server.on('after', (req: Request, res: Response) => {
    accessLog.info({ reqId: req.id(), method: req.method, url: pathOf(req.url), status: res.statusCode, ms: elapsedMs(req) }, 'request');
  });
  return server;
}

/** The path of a request target, without its query: restify's `req.path()` parses the whole URL each call. */
function pathOf(url: string | undefined): string {
  const query = url?.indexOf('?') ?? -1;
  return query < 0 ? (url ?? '') : (url as string).slice(0, query);
}

/** The HTTP side of a running service: one listener, or two when the admin API has its own. */
export class HttpListeners {
  private constructor(readonly main: Server, readonly admin: Server | undefined, private readonly logger: Logger) {}

  static build(config: ServerConfig, modules: RouteModule[], container: DependencyContainer, logger: Logger): HttpListeners {
    const main = createRestifyServer('vdb-service', config, logger);
    const admin = config.admin ? createRestifyServer('vdb-service-admin', config, logger) : undefined;
    for (const module of modules) {
      const targets = module.listener === 'every' ? [main, admin] : module.listener === 'admin' ? [admin ?? main] : [main];
      for (const target of targets) if (target) module.register(target, container);
    }
    return new HttpListeners(main, admin, logger);
  }

  /** @throws ListenFailure naming the listener (its config key) that could not bind. */
  async listen(config: ServerConfig): Promise<void> {
    await listenOn(this.main, config.host, config.port, 'server');
    if (this.admin && config.admin) await listenOn(this.admin, config.admin.host, config.admin.port, 'server.admin');
  }

  /** The base URL of the main listener, e.g. `http://127.0.0.1:8282`. */
  get url(): string {
    return urlOf(this.main);
  }

  get adminUrl(): string | undefined {
    return this.admin ? urlOf(this.admin) : undefined;
  }

  /** Stops accepting, lets in-flight requests finish (up to `drainMs`), then drops what is left. */
  async close(drainMs: number): Promise<void> {
    await Promise.all([this.main, this.admin].filter((server): server is Server => server !== undefined).map((server) => drain(server, drainMs, this.logger)));
  }
}

function listenOn(server: Server, host: string, port: number, key: ListenerKey): Promise<void> {
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) => reject(new ListenFailure(host, port, key, error));
    // restify re-emits the Node server's errors on itself: unheard there, a taken port would crash with a stack
    server.once('error', fail);
    server.listen(port, host, () => {
      server.removeListener('error', fail);
      resolve();
    });
  });
}

function urlOf(server: Server): string {
  const address = server.server.address() as AddressInfo;
  const host = isIPv6(address.address) ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
}

function drain(server: Server, drainMs: number, logger: Logger): Promise<void> {
  if (!server.server.listening) return Promise.resolve();
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      logger.warn('shutdown: closing connections still open after the drain period');
      server.server.closeAllConnections();
    }, drainMs);
    force.unref();
    // close() ends the connections idle now; one whose answer ends later would be kept for the keep-alive time
    const sweep = setInterval(() => server.server.closeIdleConnections(), 100);
    sweep.unref();
    server.server.close(() => {
      clearTimeout(force);
      clearInterval(sweep);
      resolve();
    });
  });
}
