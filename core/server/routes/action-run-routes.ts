import type { Request, Response } from 'restify';
import type { ErrorCode } from '../../plugin-api/error-catalog.js';
import { InputError, NotFoundError } from '../../plugin-api/errors.js';
import type { JournalRun } from '../../endpoints/actions/action-journal.js';
import { coreTokens } from '../../service-tokens.js';
import { requireAdminRole } from '../admin-role.js';
import { authenticate } from '../authentication.js';
import { CREDENTIAL_ERRORS, errorResponses } from '../openapi/error-responses.js';
import { cacheControl, jsonResponse } from '../openapi/operation-parts.js';
import type { ApiOperation, DescribedRoute, JsonSchema } from '../openapi/openapi-types.js';
import type { RouteModule } from '../route-module.js';

const STATES = ['running', 'compensating', 'completed', 'failed', 'recovered', 'needs_attention'] as const;
/** The most runs one answer lists, newest first. */
const MAX_RUNS = 500;

/**
 * The journal of action runs, read-only, for callers with a role of `auth.adminRoles` (docs/actions.md#admin-routes):
 * `GET /api/v1/admin/actions/runs` (`?state=`, `?action=`, `?limit=`; newest first, from every journal) and
 * `…/runs/{id}` (the run with its steps, their times and outcomes). Served on the admin listener when there is one.
 */
export const actionRunRoutes: RouteModule = {
  name: 'action-runs',
  listener: 'admin',
  register(server, container) {
    const auth = authenticate(container.resolve(coreTokens.authScheme));
    const requireAdmin = requireAdminRole(container.resolve(coreTokens.config).auth.adminRoles, 'the action runs admin API needs an admin role (auth.adminRoles)');
    const journals = () => container.resolve(coreTokens.actionJournals).all();

    server.get('/api/v1/admin/actions/runs', auth, requireAdmin, async (req: Request, res: Response) => {
      const query = new URL(req.url ?? '/', 'http://host').searchParams;
      const state = query.get('state') ?? undefined;
      if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw new InputError('invalid_request', `state must be one of ${STATES.join(', ')}`);
      const limitText = query.get('limit') ?? '100';
      const limit = Number(limitText);
      if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_RUNS) throw new InputError('invalid_request', `limit must be an integer from 1 to ${MAX_RUNS}`);
      const filter = { state, action: query.get('action') ?? undefined, limit };
      const lists = await Promise.all(journals().map(async (journal) => (await journal.list(filter)).map((run) => ({ ...run, journal: journal.name }))));
      const runs = lists.flat().sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, limit);
      res.header('Cache-Control', 'no-store');
      res.json(200, { runs });
    });

    server.get('/api/v1/admin/actions/runs/:id', auth, requireAdmin, async (req: Request, res: Response) => {
      const id = String(req.params['id']);
      for (const journal of journals()) {
        const run: JournalRun | undefined = await journal.get(id);
        if (run) {
          res.header('Cache-Control', 'no-store');
          res.json(200, { ...run, journal: journal.name });
          return;
        }
      }
      throw new NotFoundError('unknown_action_run', `no journal holds an action run ${id}`);
    });
  },
  describe(container) {
    const separate = container.resolve(coreTokens.config).server.admin !== undefined;
    return describeRunRoutes(separate ? ' Served on the admin listener (`server.admin`), not on this one.' : '');
  },
};

const SUMMARY_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['run', 'action', 'state', 'instance', 'startedAt', 'finishedAt', 'journal'],
  properties: {
    run: { type: 'string', description: 'The run id.' },
    action: { type: 'string' },
    state: { enum: [...STATES] },
    instance: { type: 'string', description: 'The `instanceId` of the instance that started it.' },
    startedAt: { type: 'string', format: 'date-time' },
    finishedAt: { type: ['string', 'null'], format: 'date-time' },
    journal: { type: 'string', description: 'The datasource whose journal holds it.' },
  },
};

const STEP_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['position', 'name', 'status', 'affectedRows', 'compensation', 'compensationStatus', 'doneAt', 'compensatedAt', 'problem'],
  properties: {
    position: { type: 'integer', description: 'The operation\'s index in the definition.' },
    name: { type: 'string' },
    status: { enum: ['started', 'done'], description: '`started`: journaled before an operation on another database than the journal\'s.' },
    affectedRows: { type: 'integer' },
    compensation: { type: ['object', 'null'], description: 'What undoes it: `datasource`, `role`, `sql`, `bindings` (or `unresolved`); null without a rollback.' },
    compensationStatus: { enum: ['none', 'compensated', 'failed'] },
    doneAt: { type: 'string', format: 'date-time' },
    compensatedAt: { type: ['string', 'null'], format: 'date-time' },
    problem: { type: ['string', 'null'], description: 'Why its compensation failed.' },
  },
};

const DETAIL_SCHEMA: JsonSchema = {
  allOf: [SUMMARY_SCHEMA],
  required: ['request', 'idempotencyKey', 'leaseUntil', 'response', 'problem', 'steps'],
  properties: {
    request: { type: 'object', description: 'The request fields.' },
    idempotencyKey: { type: ['string', 'null'], description: 'The SHA-256 (hex) of the caller\'s subject and key; null without a key, or once recovery freed it.' },
    owner: { type: 'string', description: 'The process that owns it now.' },
    leaseUntil: { type: 'string', format: 'date-time' },
    response: { type: ['object', 'null'], description: 'The answer kept for an `Idempotency-Key` retry: `{ok: true, body}` or `{ok: false, code, message, details}`.' },
    problem: { type: ['object', 'null'], description: 'For `needs_attention`: the operation, the compensation that failed and why.' },
    steps: { type: 'array', items: STEP_SCHEMA },
  },
};

function describeRunRoutes(listenerNote: string): DescribedRoute[] {
  const errors = (...more: ErrorCode[]) => errorResponses({ standard: [...CREDENTIAL_ERRORS, 'forbidden', 'datasource_unavailable', ...more] });
  const operation = (fields: Omit<ApiOperation, 'tags'>): ApiOperation => ({ ...fields, description: `${fields.description ?? ''}${listenerNote}`, tags: ['admin'] });
  return [
    {
      method: 'get',
      path: '/api/v1/admin/actions/runs',
      operation: operation({
        operationId: 'listActionRuns',
        summary: 'Action runs of the journal, newest first',
        description: 'The runs every journal of action runs holds (docs/actions.md), newest first.',
        parameters: [
          { name: 'state', in: 'query', required: false, description: 'Only runs in this state.', schema: { type: 'string', enum: [...STATES] } },
          { name: 'action', in: 'query', required: false, description: 'Only runs of this action.', schema: { type: 'string' } },
          { name: 'limit', in: 'query', required: false, description: `At most this many runs (1 to ${MAX_RUNS}, 100 by default).`, schema: { type: 'integer', minimum: 1, maximum: MAX_RUNS } },
        ],
        responses: {
          '200': jsonResponse('The runs.', { type: 'object', required: ['runs'], properties: { runs: { type: 'array', items: SUMMARY_SCHEMA } } }, cacheControl('no-store')),
          ...errors('invalid_request'),
        },
      }),
    },
    {
      method: 'get',
      path: '/api/v1/admin/actions/runs/{id}',
      operation: operation({
        operationId: 'getActionRun',
        summary: 'One action run with its steps',
        description: 'The run, its request and answer, and each operation\'s outcome, compensation and times.',
        parameters: [{ name: 'id', in: 'path', required: true, description: 'The run id.', schema: { type: 'string' } }],
        responses: { '200': jsonResponse('The run.', DETAIL_SCHEMA, cacheControl('no-store')), ...errors('unknown_action_run') },
      }),
    },
  ];
}
