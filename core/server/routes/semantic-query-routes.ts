import type { Request, Response } from 'restify';
import type { DependencyContainer } from 'tsyringe';
import { effectiveGrants } from '../../authorization/grants.js';
import { LOGICAL_TYPES } from '../../plugin-api/catalog.js';
import { ForbiddenError, UnavailableError } from '../../plugin-api/errors.js';
import { FILTER_OPERATORS } from '../../plugin-api/semantic-query.js';
import { TIME_GRAINS } from '../../plugin-api/semantic-query-syntax.js';
import { readSemanticQuery } from '../../semantic-query/query-input.js';
import type { SemanticQueries } from '../../semantic-query/semantic-query-service.js';
import { coreTokens } from '../../service-tokens.js';
import { authenticate } from '../authentication.js';
import { readBody } from '../body-parsing.js';
import { BODY_ERRORS, CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { requestSignal } from '../request-signal.js';
import { bodyContent, jsonResponse, VDB_PARAMETERS } from '../openapi/operation-parts.js';
import type { DescribedRoute, JsonSchema } from '../openapi/openapi-types.js';
import { callerOf } from '../request-context.js';
import type { RouteModule } from '../route-module.js';

/** The compiler, registered once semantic activation has run. */
function queriesOf(container: DependencyContainer): SemanticQueries {
  if (!container.isRegistered(coreTokens.semanticQueries, true)) throw new UnavailableError('semantic_initializing', 'semantic activation has not finished yet');
  return container.resolve(coreTokens.semanticQueries);
}

/**
 * The semantic query API (docs/semantic-query.md): `POST /api/v1/semantic/vdbs/{vdb}/versions/{version}/query`
 * answers measures by dimensions of the VDB's active semantic package, run as the caller; `?explain=true`
 * answers the compiled `{sql, params}` without running it.
 */
export const semanticQueryRoutes: RouteModule = {
  name: 'semantic-query',
  listener: 'main',
  register(server, container) {
    const vdbs = container.resolve(coreTokens.vdbs);
    const config = container.resolve(coreTokens.config);
    const auth = authenticate(container.resolve(coreTokens.authScheme));

    server.post('/api/v1/semantic/vdbs/:vdb/versions/:version/query', auth, async (req: Request, res: Response) => {
      const vdb = vdbs.get(String(req.params['vdb']), String(req.params['version']));
      const grants = effectiveGrants(vdb, callerOf(req));
      if (grants.access === 'unavailable') throw new ForbiddenError('forbidden', `the caller has no data role on VDB ${vdb.name} version ${vdb.version}`);
      const query = readSemanticQuery(await readBody(req, config.server.maxBodyBytes));
      const queries = queriesOf(container);
      if (new URL(req.url ?? '/', 'http://host').searchParams.get('explain') === 'true') {
        res.json(200, await queries.explain(vdb, grants, query));
        return;
      }
      const { requestTimeoutMs: timeoutMs, maxResultBytes } = config.server;
      res.json(200, await queries.run({ vdb, grants, query, timeoutMs, maxResultBytes, signal: requestSignal(req) }));
    });
  },
  describe: () => [{
    method: 'post',
    path: '/api/v1/semantic/vdbs/{vdb}/versions/{version}/query',
    operation: {
      operationId: 'semanticQuery',
      summary: 'Measures by dimensions of the VDB\'s semantic model',
      description: 'Compiles the query against the active semantic package (OSI Foundation semantics: no fan-out, no chasm trap, '
        + 'orphan facts in a NULL group, two paths or none refused) and runs it as the caller. `?explain=true` answers `{sql, params}` without running it.',
      tags: ['semantic'],
      parameters: [
        ...VDB_PARAMETERS,
        { name: 'explain', in: 'query', required: false, description: '`true`: answer the compiled statement and its bound values instead of running it.', schema: { type: 'string', enum: ['true', 'false'] } },
      ],
      requestBody: { required: true, content: bodyContent(QUERY_SCHEMA) },
      responses: {
        '200': jsonResponse('The rows (or, with `explain=true`, `{sql, params}`).', {
          oneOf: [
            {
              type: 'object',
              required: ['columns', 'rows', 'rowCount'],
              properties: {
                columns: { type: 'array', items: { type: 'object', required: ['name', 'logicalType'], properties: { name: { type: 'string' }, logicalType: { enum: LOGICAL_TYPES } } } },
                rows: { type: 'array', items: { type: 'object' } },
                rowCount: { type: 'integer', minimum: 0 },
              },
            },
            { type: 'object', required: ['sql', 'params'], properties: { sql: { type: 'string' }, params: { type: 'array' } } },
          ],
        }),
        ...errorResponses({
          standard: [...CREDENTIAL_ERRORS, ...BODY_ERRORS, 'semantic_query_invalid', 'forbidden', 'vdb_not_found', 'semantic_unavailable',
            'semantic_initializing', 'datasource_unavailable', 'result_too_large', 'statement_timeout', 'query_failed', 'startup_blocked'],
        }),
      },
    },
  }] satisfies DescribedRoute[],
};

const NAME: JsonSchema = { type: 'string', description: '`dataset.field`, or a metric name.' };
const FILTER: JsonSchema = { type: 'object', required: ['field', 'operator'], properties: { field: NAME, operator: { enum: FILTER_OPERATORS }, values: { type: 'array' }, value: {} } };
const PREDICATE: JsonSchema = {
  oneOf: [
    { type: 'string', description: 'An OSI expression; its literals are bound.' },
    FILTER,
    {
      type: 'array',
      description: 'Their conjunction: OSI expressions and structured filters.',
      items: {
        oneOf: [
          { type: 'string' },
          FILTER,
        ],
      },
    },
  ],
};

const ORDER_BY: JsonSchema = {
  type: 'array',
  items: {
    oneOf: [
      { type: 'string', description: 'A name or expression, optionally followed by `ASC`/`DESC` and `NULLS FIRST`/`LAST`.' },
      { type: 'object', required: ['field'], properties: { field: NAME, direction: { enum: ['asc', 'desc', 'ASC', 'DESC'] }, nulls: { enum: ['first', 'last'] } } },
    ],
  },
};

const QUERY_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'Also read as the OSI Foundation writes it: under a `query` key, keys in any case, `order_by` for `orderBy`.',
  properties: {
    dimensions: {
      type: 'array',
      items: {
        oneOf: [
          { type: 'string', description: '`dataset.field`, or a row-level expression over fields; either optionally ` AS alias`.' },
          { type: 'object', required: ['field'], properties: { field: NAME, grain: { enum: TIME_GRAINS }, alias: { type: 'string' } } },
        ],
      },
    },
    measures: {
      type: 'array',
      items: {
        oneOf: [
          { type: 'string', description: 'A metric name, or an aggregate expression; either optionally ` AS alias`.' },
          { type: 'object', required: ['metric'], properties: { metric: { type: 'string' }, alias: { type: 'string' } } },
          { type: 'object', required: ['expression'], properties: { expression: { type: 'string' }, alias: { type: 'string' } } },
          { type: 'object', required: ['name'], description: 'As a model writes a metric: `name` is the column (or, alone, the metric).', properties: { name: { type: 'string' }, expression: { type: 'string' } } },
        ],
      },
    },
    fields: {
      type: 'array',
      description: 'A scalar query instead of dimensions and measures: one row per row of the home dataset.',
      items: { oneOf: [NAME, { type: 'object', properties: { field: NAME, expression: { type: 'string' }, alias: { type: 'string' } } }] },
    },
    where: PREDICATE,
    having: PREDICATE,
    orderBy: ORDER_BY,
    order_by: ORDER_BY,
    limit: { type: 'integer', minimum: 0 },
    offset: { type: 'integer', minimum: 0 },
  },
};
