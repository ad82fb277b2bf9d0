import type { Request, RequestHandler, Response, Route } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { coreTokens } from '../../service-tokens.js';
import { requireAdminRole } from '../admin-role.js';
import { authenticate } from '../authentication.js';
import { CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { NO_AUTH } from '../openapi/operation-parts.js';
import type { ApiOperation } from '../openapi/openapi-types.js';
import { elapsedMs } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** Where Prometheus scrapes; the index points here. */
export const METRICS_PATH = '/observe/metrics';

/** The route label of a request no route took (404, 405, the startup gate): never the raw URL. */
const UNMATCHED = 'unmatched';

/** Authentication and the admin role when `observe.metrics.auth` is `admin`; nothing when it is `none`. */
function guardOf(container: DependencyContainer): RequestHandler[] {
  const config = container.resolve(coreTokens.config);
  if (config.observe.metrics.auth === 'none') return [];
  return [
    authenticate(container.resolve(coreTokens.authScheme)),
    requireAdminRole(config.auth.adminRoles, 'the metrics need an admin role (auth.adminRoles), as observe.metrics.auth is admin'),
  ];
}

/**
 * `GET /observe/metrics`: the service's metrics in Prometheus' text format (docs/observability.md). Also
 * counts every answered request of the listener by its route pattern, and points the activation gauge at
 * the semantic registry.
 */
export const metricsRoutes: RouteModule = {
  name: 'metrics',
  listener: 'every',
  register(server, container) {
    const metrics = container.resolve(coreTokens.metrics);
    metrics.watchActivations(() => (container.isRegistered(coreTokens.semantic, true) ? container.resolve(coreTokens.semantic).list() : []));
    server.on('after', (req: Request, res: Response, route: Route | null | undefined) => {
      metrics.request(req.method ?? '', route ? String(route.path) : UNMATCHED, res.statusCode, elapsedMs(req) / 1000);
    });
    server.get(METRICS_PATH, ...guardOf(container), async (_req: Request, res: Response) => {
      const { contentType, text } = await metrics.exposition();
      res.header('Content-Type', contentType);
      res.header('Cache-Control', 'no-store');
      res.sendRaw(200, text);
    });
  },
  describe(container) {
    const admin = container.resolve(coreTokens.config).observe.metrics.auth === 'admin';
    const operation: ApiOperation = {
      operationId: 'getMetrics',
      summary: 'Metrics in the Prometheus text format',
      description: 'Requests by route pattern and status, latencies, statements by datasource and outcome, tasks, VDB activation states, '
        + `pool usage and process metrics (docs/observability.md). ${admin ? 'Needs an admin role (observe.metrics.auth: admin).' : 'No authentication (observe.metrics.auth: none).'}`,
      tags: ['observe'],
      ...(admin ? {} : { security: NO_AUTH }),
      responses: {
        '200': { description: 'The metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
        ...errorResponses({ standard: admin ? [...CREDENTIAL_ERRORS, 'forbidden', 'startup_blocked'] : ['startup_blocked'] }),
      },
    };
    return [{ method: 'get', path: METRICS_PATH, operation }];
  },
};
