import type { Request, Response } from 'restify';
import { errorResponses } from '../openapi/error-responses.js';
import { openApiDocument } from '../openapi/openapi-document.js';
import { cacheControl, jsonResponse, NO_AUTH } from '../openapi/operation-parts.js';
import type { RouteModule } from '../route-module.js';

/** Where the document is served; the docs page and the index point here. */
export const OPENAPI_PATH = '/api/v1/openapi.json';

/**
 * `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of the given route modules and of itself, without
 * authentication. Built once when the routes are registered, as the definitions and config it reads are
 * fixed by then; a module that describes a route twice stops startup rather than a request.
 */
export function openApiRoutes(described: readonly RouteModule[]): RouteModule {
  const module: RouteModule = {
    name: 'openapi',
    listener: 'main',
    register(server, container) {
      const document = JSON.stringify(openApiDocument([...described, module], container));
      server.get(OPENAPI_PATH, async (_req: Request, res: Response) => {
        res.header('Cache-Control', 'no-cache');
        res.header('Content-Type', 'application/json');
        res.sendRaw(200, document);
      });
    },
    describe() {
      return [{
        method: 'get',
        path: OPENAPI_PATH,
        operation: {
          operationId: 'getOpenApiDocument',
          summary: 'This document',
          description: 'Generated from the routes and the loaded definitions of this instance: one operation per query and action.',
          tags: ['discovery'],
          security: NO_AUTH,
          responses: {
            '200': jsonResponse('The OpenAPI 3.1 document.', { type: 'object', required: ['openapi', 'info', 'paths'] }, cacheControl('no-cache')),
            ...errorResponses({ standard: ['startup_blocked'] }),
          },
        },
      }];
    },
  };
  return module;
}
