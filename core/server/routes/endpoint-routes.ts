import type { Request, Response } from 'restify';
import type { ServerConfig } from '../../config/config-types.js';
import type { ActionEndpoint } from '../../endpoints/action-endpoint.js';
import type { EndpointRequest } from '../../endpoints/endpoint-request.js';
import type { QueryEndpoint } from '../../endpoints/query-endpoint.js';
import { LOGICAL_TYPES } from '../../plugin-api/catalog.js';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import { InputError } from '../../plugin-api/errors.js';
import { coreTokens } from '../../service-tokens.js';
import { authenticateRequest } from '../authentication.js';
import { readBody } from '../body-parsing.js';
import { BODY_ERRORS, CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { bodyContent, jsonResponse } from '../openapi/operation-parts.js';
import type { ApiOperation, DescribedRoute, JsonSchema } from '../openapi/openapi-types.js';
import { serveFirst } from '../first-route.js';
import { callerOf } from '../request-context.js';
import { requestSignal } from '../request-signal.js';
import type { RouteModule } from '../route-module.js';
import { startupBlocked } from '../startup-gate.js';

const QUERY_ROUTE = '/api/v1/query/perform/:name';
const QUERY_PREFIX = '/api/v1/query/perform/';

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
    const scheme = container.resolve(coreTokens.authScheme);
    const { maxBodyBytes } = config.server;

    const perform = async (req: Request, query: QueryEndpoint) => {
      // authenticated first in the handler itself: one turn of restify's handler chain less per request
      await authenticateRequest(scheme, req);
      return query.perform(endpointRequest(req, await readBody(req, maxBodyBytes), config.server));
    };
    // the hot route: served from restify's first hook when the URL is the plain path of a known query
    const blocked = startupBlocked(container);
    serveFirst(server, container.resolve(coreTokens.logger), {
      method: 'POST',
      pattern: QUERY_ROUTE,
      match: (req) => (req.url?.startsWith(QUERY_PREFIX) && !blocked() ? endpoints.findQuery(req.url.slice(QUERY_PREFIX.length)) : undefined),
      handle: perform,
    });
    server.post(QUERY_ROUTE, async (req: Request, res: Response) => {
      const query = endpoints.query(String(req.params['name']));
      if (new URL(req.url ?? '/', 'http://host').searchParams.get('explain') === 'true') {
        await authenticateRequest(scheme, req);
        res.json(200, await query.explain(endpointRequest(req, await readBody(req, maxBodyBytes), config.server)));
        return;
      }
      res.json(200, await perform(req, query));
    });

    server.post('/api/v1/actions/run/:name', async (req: Request, res: Response) => {
      await authenticateRequest(scheme, req);
      const action = endpoints.action(String(req.params['name']));
      const key = req.header('idempotency-key');
      res.json(200, await action.run(endpointRequest(req, await readBody(req, maxBodyBytes), config.server), key === undefined || key === '' ? undefined : key));
    });
  },
  describe(container) {
    const { queries, actions } = container.resolve(coreTokens.endpoints).list();
    return [
      ...queries.map((query): DescribedRoute => ({ method: 'post', path: `/api/v1/query/perform/${query.name}`, operation: queryOperation(query) })),
      ...actions.map((action): DescribedRoute => ({ method: 'post', path: `/api/v1/actions/run/${action.name}`, operation: actionOperation(action) })),
    ];
  },
};

/** The body must be a mapping of field names to values; no body is no fields. */
function endpointRequest(req: Request, body: unknown, limits: ServerConfig): EndpointRequest {
  const fields: unknown = body ?? {};
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) {
    throw new InputError('invalid_body', 'the body must be a mapping of field names to values');
  }
  const { requestTimeoutMs: timeoutMs, maxResultBytes } = limits;
  return { fields: fields as Record<string, unknown>, caller: callerOf(req), requestId: req.id(), timeoutMs, maxResultBytes, signal: requestSignal(req) };
}

/** What every endpoint answers besides its own failures. */
const COMMON_ERRORS: readonly ErrorCode[] = [
  ...CREDENTIAL_ERRORS, ...BODY_ERRORS, 'missing_fields', 'unknown_identifier', 'forbidden', 'definition_error', 'datasource_unavailable', 'startup_blocked',
];

/**
 * The body of one definition: its needed fields required; any other field it reads is optional, so others
 * are allowed (an absent field is null in the template).
 */
export function fieldsSchema(needed: readonly string[]): JsonSchema {
  return {
    type: 'object',
    description: 'The request fields, a mapping of names to values; values are bound, never spliced into SQL.',
    required: [...needed],
    properties: Object.fromEntries(needed.map((field) => [field, { description: 'A needed field: absent or null answers 400 `missing_fields`.' }])),
    additionalProperties: true,
  };
}

function endpointOperation(kind: 'query' | 'action', endpoint: QueryEndpoint | ActionEndpoint): Omit<ApiOperation, 'responses'> {
  const { vdb } = endpoint.handle;
  const needed = endpoint.neededFields.length > 0 ? `needed fields: ${endpoint.neededFields.map((field) => `\`${field}\``).join(', ')}` : 'no needed field';
  return {
    operationId: `${kind}_${endpoint.name}`,
    summary: `${kind === 'query' ? 'Query' : 'Action'} ${endpoint.name}`,
    description: `The ${kind} definition \`${kind === 'query' ? 'queries' : 'actions'}/${endpoint.name}\` on VDB ${vdb.name} version ${vdb.version}; ${needed}. `
      + 'Every statement runs within the caller\'s data roles.',
    tags: [kind === 'query' ? 'queries' : 'actions'],
    requestBody: { required: endpoint.neededFields.length > 0, content: bodyContent(fieldsSchema(endpoint.neededFields)) },
  };
}

const QUERY_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['rows', 'rowCount', 'columns'],
  properties: {
    rows: { type: 'array', items: { type: 'object' }, description: 'Values encoded by logical type (docs/logical-types.md).' },
    rowCount: { type: 'integer', minimum: 0 },
    columns: {
      type: 'array',
      items: { type: 'object', required: ['name', 'logicalType'], properties: { name: { type: 'string' }, logicalType: { enum: LOGICAL_TYPES } } },
    },
  },
};

const ACTION_RESULT_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['action', 'status', 'operations', 'context'],
  properties: {
    action: { type: 'string' },
    status: { const: 'completed' },
    operations: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'status', 'affectedRows'],
        properties: { name: { type: 'string' }, status: { enum: ['done', 'skipped', 'failed', 'not_run'] }, affectedRows: { type: 'integer' } },
      },
    },
    context: { type: 'object', description: 'What `waitUntilEffective` steps read back, by `putInContextVar`.' },
  },
};

function queryOperation(query: QueryEndpoint): ApiOperation {
  return {
    ...endpointOperation('query', query),
    parameters: [{
      name: 'explain', in: 'query', required: false, schema: { type: 'string', enum: ['true', 'false'] },
      description: '`true`: answer what would run instead of running it: `{sql, params}` on one datasource; over several, '
        + '`{sources: [{datasource, sql, dependentOn?}], engine: {sql}}`, bound values elided (docs/federation.md).',
    }],
    responses: {
      '200': jsonResponse('The rows, with the logical type of each column (or, with `explain=true`, the plan).', QUERY_RESULT_SCHEMA),
      ...errorResponses({ standard: [...COMMON_ERRORS, 'federation_unsupported', 'result_too_large', 'statement_timeout', 'query_failed'] }),
    },
  };
}

function actionOperation(action: ActionEndpoint): ApiOperation {
  const described = endpointOperation('action', action);
  return {
    ...described,
    parameters: [...(described.parameters ?? []), {
      name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'A retry with the same key and body answers the first run\'s answer without running again (docs/actions.md#idempotency-key); kept `actions.idempotencyTtlSeconds`.',
    }],
    responses: {
      '200': jsonResponse('Every operation ran (or was skipped).', ACTION_RESULT_SCHEMA),
      ...errorResponses({
        standard: [...COMMON_ERRORS, 'assertion_failed', 'operation_conflict', 'operation_failed', 'wait_timeout', 'statement_timeout',
          'invalid_idempotency_key', 'idempotency_key_reused', 'idempotency_key_in_flight', 'action_run_taken_over'],
      }),
    },
  };
}
