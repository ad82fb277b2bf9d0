import type { Request, Response } from 'restify';
import type { EndpointRequest } from '../../endpoints/endpoint-request.js';
import { InputError } from '../../plugin-api/errors.js';
import { coreTokens } from '../../service-tokens.js';
import { authenticate } from '../authentication.js';
import { readBody } from '../body-parsing.js';
import { callerOf } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/**
 * The declarative endpoints (docs/endpoints.md): `POST /api/v1/query/perform/{name}` and
 * `POST /api/v1/actions/run/{name}`, with a JSON or YAML body of request fields.
 */
export const endpointRoutes: RouteModule = {
  name: 'endpoints',
  listener: 'main',
  register(server, container) {
    const endpoints = container.resolve(coreTokens.endpoints);
    const config = container.resolve(coreTokens.config);
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const { maxBodyBytes, requestTimeoutMs } = config.server;

    server.post('/api/v1/query/perform/:name', auth, async (req: Request, res: Response) => {
      const query = endpoints.query(String(req.params['name']));
      res.json(200, await query.perform(endpointRequest(req, await readBody(req, maxBodyBytes), requestTimeoutMs)));
    });

    server.post('/api/v1/actions/run/:name', auth, async (req: Request, res: Response) => {
      const action = endpoints.action(String(req.params['name']));
      res.json(200, await action.run(endpointRequest(req, await readBody(req, maxBodyBytes), requestTimeoutMs)));
    });
  },
};

/** The body must be a mapping of field names to values; no body is no fields. */
function endpointRequest(req: Request, body: unknown, timeoutMs: number): EndpointRequest {
  const fields: unknown = body ?? {};
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new InputError('invalid_body', 'the body must be a mapping of field names to values');
  }
  return { fields: fields as Record<string, unknown>, caller: callerOf(req), requestId: req.id(), timeoutMs };
}
