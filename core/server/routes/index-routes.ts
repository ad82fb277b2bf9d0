import type { Request, Response } from 'restify';
import { CORE_VERSION } from '../../plugins/manifest-validation.js';
import { errorResponses } from '../openapi/error-responses.js';
import { jsonResponse, NO_AUTH } from '../openapi/operation-parts.js';
import type { RouteModule } from '../route-module.js';
import { DOCS_PATH } from './docs-routes.js';
import { METRICS_PATH } from './metrics-routes.js';
import { OPENAPI_PATH } from './openapi-routes.js';

/** Where a newcomer goes next; health is the one route of health-routes.ts. */
const LINKS = { docs: DOCS_PATH, openapi: OPENAPI_PATH, health: '/observe/health', metrics: METRICS_PATH };

/** `GET /`: a small JSON index pointing at the reference page, the OpenAPI document, health and metrics. */
export const indexRoutes: RouteModule = {
  name: 'index',
  listener: 'main',
  register(server) {
    const index = { name: 'vdb-service', version: CORE_VERSION, links: LINKS };
    server.get('/', async (_req: Request, res: Response) => {
      res.json(200, index);
    });
  },
  describe() {
    return [{
      method: 'get',
      path: '/',
      operation: {
        operationId: 'getIndex',
        summary: 'Where to start: links to the docs, this document, health and metrics',
        tags: ['discovery'],
        security: NO_AUTH,
        responses: {
          '200': jsonResponse('The index.', {
            type: 'object',
            required: ['name', 'version', 'links'],
            properties: {
              name: { const: 'vdb-service' },
              version: { type: 'string' },
              links: { type: 'object', required: Object.keys(LINKS), properties: Object.fromEntries(Object.keys(LINKS).map((key) => [key, { type: 'string' }])) },
            },
            examples: [{ name: 'vdb-service', version: CORE_VERSION, links: LINKS }],
          }),
          ...errorResponses({ standard: ['startup_blocked'] }),
        },
      },
    }];
  },
};
