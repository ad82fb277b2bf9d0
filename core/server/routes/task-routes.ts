import type { Request, Response } from 'restify';
import type { CapabilityConfig } from '../../config/config-types.js';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import { coreTokens } from '../../service-tokens.js';
import { authenticate } from '../authentication.js';
import { readBody } from '../body-parsing.js';
import { BODY_ERRORS, CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { cacheControl, jsonResponse, pathParameter } from '../openapi/operation-parts.js';
import type { ApiOperation, DescribedRoute } from '../openapi/openapi-types.js';
import { TASK_REQUEST_SCHEMA } from '../openapi/task-schemas.js';
import { answersIn, callerOf } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** No answer of the Task API, an error included, may be cached: each is one caller's task. */
async function noStore(_req: Request, res: Response): Promise<void> {
  res.header('Cache-Control', 'no-store');
}

/**
 * The Task API (docs/tasks.md): one synchronous task per call, on the versioned route or on the
 * versionless one. Every answer is JSON with `Cache-Control: no-store`; errors, authentication and body
 * ones included, answer in the task error envelope, where the error catalog gives some their Task API spelling.
 */
export const taskRoutes: RouteModule = {
  name: 'tasks',
  listener: 'main',
  register(server, container) {
    const tasks = container.resolve(coreTokens.tasks);
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const { maxBodyBytes } = container.resolve(coreTokens.config).server;

    const handle = async (req: Request, res: Response) => {
      const body = await readBody(req, maxBodyBytes);
      const params = req.params as Record<string, string | undefined>;
      const snapshot = await tasks.run({
        capability: String(params['capability']), vdb: String(params['vdb']), version: params['version'], body, caller: callerOf(req),
      });
      res.json(200, snapshot);
    };

    const chain = [answersIn('task'), noStore, auth, handle];
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/versions/:version/tasks', ...chain);
    server.post('/api/v1/capabilities/:capability/vdbs/:vdb/tasks', ...chain);
  },
  describe(container) {
    const { capabilities } = container.resolve(coreTokens.config);
    return [
      { method: 'post', path: '/api/v1/capabilities/{capability}/vdbs/{vdb}/versions/{version}/tasks', operation: taskOperation(capabilities, true) },
      { method: 'post', path: '/api/v1/capabilities/{capability}/vdbs/{vdb}/tasks', operation: taskOperation(capabilities, false) },
    ] satisfies DescribedRoute[];
  },
};

/** What both task routes answer in the task envelope; the shared request handling's codes in its spelling. */
const TASK_ERRORS: readonly ErrorCode[] = [
  ...CREDENTIAL_ERRORS, ...BODY_ERRORS, 'invalid_request', 'invalid_goal', 'unknown_capability', 'invalid_vdb', 'vdb_not_found',
  'request_too_large', 'runtime_failed', 'runtime_protocol_error', 'runtime_disabled', 'runtime_unavailable', 'context_unavailable',
];

function taskOperation(capabilities: readonly CapabilityConfig[], versioned: boolean): ApiOperation {
  const offered = capabilities.map((capability) => `\`${capability.name}\`${capability.description ? `: ${capability.description}` : ''}`).join('; ');
  return {
    operationId: versioned ? 'runTask' : 'runTaskOnOnlyVersion',
    summary: versioned ? 'Run a task on one VDB version' : 'Run a task on the one version of a VDB',
    description: 'One synchronous task: the agent runtime plans, the service runs each query it proposes as the caller, re-authorized, '
      + 'within the capability\'s budgets, and answers the terminal snapshot. A client that disconnects does not cancel it.'
      + (versioned ? '' : ' The VDB must have exactly one version (409 `ambiguous_vdb_version` otherwise).'),
    tags: ['tasks'],
    parameters: [
      pathParameter('capability', `A capability of this service: ${offered}.`, { enum: capabilities.map((capability) => capability.name) }),
      pathParameter('vdb', 'The VDB name.', { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' }),
      ...(versioned ? [pathParameter('version', 'The VDB version.', { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' })] : []),
    ],
    requestBody: { required: true, content: { 'application/json': { schema: TASK_REQUEST_SCHEMA } } },
    responses: {
      '200': jsonResponse('The terminal snapshot: its `state` says how the task ended, `stop` why.', { $ref: '#/components/schemas/TaskSnapshot' }, cacheControl('no-store')),
      ...errorResponses({ task: versioned ? TASK_ERRORS : [...TASK_ERRORS, 'ambiguous_vdb_version'], standard: ['startup_blocked'] }),
    },
  };
}
