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

const COUNT = { type: 'integer', minimum: 0 } as const;

const HEALTH_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'semantic', 'datasources'],
  properties: {
    status: { enum: ['UP', 'DOWN'] },
    datasources: {
      type: 'object',
      description: 'Counts only: how many of the opened datasources answered a trivial statement within 3 s at the last check (at most about a second old when probed regularly; the first health waits for one). Status does not depend on them: GET /observe/ready does.',
      required: ['total', 'up', 'down'],
      properties: { total: COUNT, up: COUNT, down: COUNT },
    },
    semantic: {
      type: 'object',
      description: 'Counts only, no VDB names (docs/semantic.md: states and the precedence of availability).',
      properties: {
        semanticAvailability: { enum: AVAILABILITIES },
        ...Object.fromEntries(Object.keys(INITIALIZING_HEALTH).filter((key) => key !== 'semanticAvailability').map((key) => [key, COUNT])),
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

const READY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['status', 'unavailable'],
  properties: {
    status: { enum: ['READY', 'NOT_READY'] },
    unavailable: { type: 'array', items: { type: 'string' }, description: 'The names (keys under `datasources` in the config) of the datasources that did not answer.' },
  },
};

function readyOperation(operationId: string, withBody: boolean): ApiOperation {
  const answer = (description: string) => (withBody ? jsonResponse(description, READY_SCHEMA, cacheControl('no-store')) : { description, headers: cacheControl('no-store') });
  return {
    operationId,
    summary: withBody ? 'Readiness: whether every datasource answers' : 'Readiness as a status only',
    description: 'For a load balancer: send traffic only while this answers 200 (docs/observability.md). Each datasource is sent a trivial statement, bounded to 3 s; answers are shared for 1 s.',
    tags: ['observe'],
    security: NO_AUTH,
    responses: {
      '200': answer('READY: every datasource answered.'),
      '503': answer('NOT_READY: `unavailable` names the datasources that did not answer.'),
    },
  };
}

/**
 * The datasources' answers, as counts for health: those of the last check, so that health never waits on a
 * database; none while the service initializes (no datasource opened yet).
 */
async function datasourceCounts(container: DependencyContainer): Promise<{ total: number; up: number; down: number }> {
  const statuses = container.isRegistered(coreTokens.readiness, true) ? await container.resolve(coreTokens.readiness).latest() : [];
  const up = statuses.filter((status) => status.up).length;
  return { total: statuses.length, up, down: statuses.length - up };
}

/**
 * `GET|HEAD /observe/health`: no authentication and no VDB names, only counts. 200 `UP`, or 503 `DOWN`
 * while initializing or when a semantic failure blocks startup (docs/semantic.md); `datasources` counts
 * those that answer, without changing the status (an orchestrator that restarted the service for a database
 * outage would restart it in vain). `GET|HEAD /observe/ready`: 200 while every datasource answers, 503
 * naming those that do not, for a load balancer.
 */
export const healthRoutes: RouteModule = {
  name: 'health',
  listener: 'every',
  register(server, container) {
    const report = async (_req: Request, res: Response) => {
      const semantic = semanticHealth(container);
      const down = DOWN.has(semantic.semanticAvailability);
      const datasources = await datasourceCounts(container);
      res.header('Cache-Control', 'no-store');
      res.json(down ? 503 : 200, { status: down ? 'DOWN' : 'UP', semantic, datasources });
    };
    server.get('/observe/health', report);
    server.head('/observe/health', report);
    const ready = async (_req: Request, res: Response) => {
      const unavailable = (await container.resolve(coreTokens.readiness).check()).filter((status) => !status.up).map((status) => status.name);
      res.header('Cache-Control', 'no-store');
      res.json(unavailable.length > 0 ? 503 : 200, { status: unavailable.length > 0 ? 'NOT_READY' : 'READY', unavailable });
    };
    server.get('/observe/ready', ready);
    server.head('/observe/ready', ready);
  },
  describe() {
    return [
      { method: 'get', path: '/observe/health', operation: healthOperation('getHealth', 'Health: UP or DOWN, with the semantic counts', true) },
      { method: 'head', path: '/observe/health', operation: healthOperation('headHealth', 'Health as a status only', false) },
      { method: 'get', path: '/observe/ready', operation: readyOperation('getReady', true) },
      { method: 'head', path: '/observe/ready', operation: readyOperation('headReady', false) },
    ];
  },
};
