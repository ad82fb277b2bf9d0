import type { Request, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { INITIALIZING_HEALTH } from '../../semantic/semantic-registry.js';
import type { SemanticAvailability, SemanticHealth } from '../../semantic/semantic-types.js';
import { coreTokens } from '../../service-tokens.js';
import { cacheControl, jsonResponse, NO_AUTH } from '../openapi/operation-parts.js';
import type { ApiOperation, JsonSchema } from '../openapi/openapi-types.js';
import type { RouteModule } from '../route-module.js';

/** Availabilities that make the service DOWN (503); every other one is UP (200). */
const DOWN: ReadonlySet<SemanticAvailability> = new Set(['initializing', 'unavailable']);

const AVAILABILITIES = ['initializing', 'notConfigured', 'catalogOnly', 'available', 'degraded', 'unavailable'] as const satisfies readonly SemanticAvailability[];

/** The semantic section: `initializing` until semantic activation has registered its registry. */
function semanticHealth(container: DependencyContainer): SemanticHealth {
  return container.isRegistered(coreTokens.semantic, true) ? container.resolve(coreTokens.semantic).health() : INITIALIZING_HEALTH;
}

const HEALTH_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'semantic'],
  properties: {
    status: { enum: ['UP', 'DOWN'] },
    semantic: {
      type: 'object',
      description: 'Counts only, no VDB names (docs/semantic.md: states and the precedence of availability).',
      properties: {
        semanticAvailability: { enum: AVAILABILITIES },
        ...Object.fromEntries(Object.keys(INITIALIZING_HEALTH).filter((key) => key !== 'semanticAvailability').map((key) => [key, { type: 'integer', minimum: 0 }])),
      },
    },
  },
};

function healthOperation(operationId: string, summary: string, withBody: boolean): ApiOperation {
  const answer = (description: string) => (withBody ? jsonResponse(description, HEALTH_SCHEMA, cacheControl('no-store')) : { description, headers: cacheControl('no-store') });
  return {
    operationId,
    summary,
    tags: ['observe'],
    security: NO_AUTH,
    responses: { '200': answer('UP: the service serves.'), '503': answer('DOWN: semantic activation has not finished, or a failure under policy blockStartup.') },
  };
}

/**
 * `GET|HEAD /observe/health`: no authentication and no VDB names, only counts. 200 `UP`, or 503 `DOWN`
 * while initializing or when a semantic failure blocks startup (docs/semantic.md).
 */
export const healthRoutes: RouteModule = {
  name: 'health',
  listener: 'every',
  register(server, container) {
    const report = async (_req: Request, res: Response) => {
      const semantic = semanticHealth(container);
      const down = DOWN.has(semantic.semanticAvailability);
      res.header('Cache-Control', 'no-store');
      res.json(down ? 503 : 200, { status: down ? 'DOWN' : 'UP', semantic });
    };
    server.get('/observe/health', report);
    server.head('/observe/health', report);
  },
  describe() {
    return [
      { method: 'get', path: '/observe/health', operation: healthOperation('getHealth', 'Health: UP or DOWN, with the semantic counts', true) },
      { method: 'head', path: '/observe/health', operation: healthOperation('headHealth', 'Health as a status only', false) },
    ];
  },
};
