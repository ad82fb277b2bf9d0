import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { TaskAdvanceDocument, TaskStartDocument } from '../../../core/plugin-api/task-documents.js';
import { FaultyDatasource } from '../endpoints/faulty-datasource.js';
import { FakeRuntime, snapshotFor, type FakeRouteRequest } from '../../plugins/runtime-http/fake-runtime.js';
import { longText, manyTerms, nestedSubqueries } from '../../support/hostile-statements.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const RUNTIME_TOKEN = 'service-runtime-credential-01';
const VDBS = {
  'bundle/vdbs/shop.yaml': `name: shop
version: "1"
datasource: retail_db
schemas: [{ name: sales }]
dataRoles:
  - { name: clerk, grants: [{ resource: sales, allow: [select] }] }
  - { name: analyst, grants: [{ resource: sales.products, allow: [select] }] }
`,
  'bundle/vdbs/retail-a.yaml': 'name: retail\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n',
  'bundle/vdbs/retail-b.yaml': 'name: retail\nversion: "2"\ndatasource: retail_db\nschemas: [{ name: sales }]\n',
};
const STRICT = { maxSteps: 2, maxServiceActions: 3, maxObservationRows: 10, maxObservationBytes: 2000, maxModelCalls: 1, maxInputTokens: 100, maxOutputTokens: 50, maxDurationSeconds: 2 };

function taskConfig(fake: FakeRuntime, runtime: Record<string, unknown> = {}) {
  return demoConfig({
    descriptors: './bundle',
    server: { host: '127.0.0.1', port: 0, maxBodyBytes: 4 * 1024 * 1024 },
    runtime: { transport: 'http', baseURL: fake.url, bearerToken: RUNTIME_TOKEN, timeoutMs: 500, transportLimitBytes: 1024 * 1024, ...runtime },
    capabilities: [{ name: 'answer' }, { name: 'strict', budgets: STRICT }],
  });
}

interface Reply {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

const tasks = suite<{ service: TestService; fake: FakeRuntime; db: FaultyDatasource }>('Task API through the http transport, against a fake runtime');

tasks.before(async (context) => {
  context.fake = await FakeRuntime.start({ requireToken: RUNTIME_TOKEN });
  context.db = new FaultyDatasource(await sharedPglite());
  context.service = await startTestService({ config: taskConfig(context.fake), files: VDBS, datasources: { retail_db: context.db } });
});
tasks.after(async ({ service, fake }) => {
  await service?.close();
  await fake?.close();
});
tasks.before.each(({ fake, db }) => {
  fake.reset();
  fake.script = [];
  fake.fallback = { kind: 'ok' };
  db.pingFails = false;
});

async function post(service: TestService, path: string, body: unknown, token: string | null = ADMIN_TOKEN, signal?: AbortSignal): Promise<Reply> {
  const response = await service.request(path, {
    method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' }, token, ...(signal ? { signal } : {}),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}
const versioned = (capability = 'answer', vdb = 'shop', version = '1') => `/api/v1/capabilities/${capability}/vdbs/${vdb}/versions/${version}/tasks`;

function assertEnvelope(reply: Reply, status: number, code: string, retryable = false): void {
  assert.is(reply.status, status, JSON.stringify(reply.body));
  assert.equal({ ...reply.body, message: typeof reply.body['message'] }, { format: 'service-task-error', formatVersion: 1, code, message: 'string', retryable });
  assert.is(reply.headers.get('cache-control'), 'no-store');
  assert.match(reply.headers.get('content-type') ?? '', /^application\/json/);
}

tasks('a task: start with the service credential and the authorized context, a terminal snapshot with no-store', async ({ service, fake }) => {
  const reply = await post(service, versioned(), { goal: 'how many products?', externalContextId: 'ticket-7', externalContext: { locale: 'de', nested: [1, { a: null }] }, artifactIds: ['doc-1', 'doc-2'], caller: 'mallory', roles: ['admin'] });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  assert.is(reply.headers.get('cache-control'), 'no-store');
  assert.is(reply.body['format'], 'service-task-snapshot');
  assert.is(reply.body['state'], 'completed');
  assert.equal((reply.body['task'] as { target: unknown }).target, { instanceId: 'test-1', vdbName: 'shop', vdbVersion: '1' });
  assert.equal(reply.body['usage'], { inputTokens: 0, outputTokens: 0, modelCalls: 0, serviceActions: 0, observationRows: 0, observationBytes: 0 });
  const [start] = fake.calls('start');
  assert.is(start?.headers.authorization, `Bearer ${RUNTIME_TOKEN}`);
  const document = start?.body as TaskStartDocument;
  assert.equal([document.externalContextId, document.externalContext, document.artifactIds], ['ticket-7', { contentType: 'application/json', data: { locale: 'de', nested: [1, { a: null }] } }, ['doc-1', 'doc-2']]);
  // the admin's clerk role selects every column of every relation of shop
  assert.is(document.authorizedContext.access, 'complete');
  const text = JSON.stringify(document);
  for (const secret of [ADMIN_TOKEN, 'ops', 'mallory']) assert.not.ok(text.includes(`"${secret}"`) || text.includes(secret === 'ops' ? '"subject"' : secret), `the start document carries ${secret}`);
});

tasks('the versionless route serves the one version, and is 409 when a name has several', async ({ service }) => {
  const one = await post(service, '/api/v1/capabilities/answer/vdbs/shop/tasks', { goal: 'x' });
  assert.is(one.status, 200, JSON.stringify(one.body));
  assertEnvelope(await post(service, '/api/v1/capabilities/answer/vdbs/retail/tasks', { goal: 'x' }), 409, 'ambiguous_vdb_version');
  assert.is((await post(service, versioned('answer', 'retail', '2'), { goal: 'x' })).status, 200);
});

tasks('400, 401 and 404 in the error envelope', async ({ service, fake }) => {
  assertEnvelope(await post(service, versioned(), { goal: '  ' }), 400, 'invalid_goal');
  assertEnvelope(await post(service, versioned(), { externalContextId: 'x' }), 400, 'invalid_goal');
  assertEnvelope(await post(service, versioned(), { goal: 'x', artifactIds: 'doc-1' }), 400, 'invalid_request');
  assertEnvelope(await post(service, versioned(), '{"goal": '), 400, 'invalid_request');
  assertEnvelope(await post(service, versioned(), ['goal']), 400, 'invalid_request');
  assertEnvelope(await post(service, versioned('summarize'), { goal: 'x' }), 400, 'unknown_capability');
  assertEnvelope(await post(service, versioned('answer', 'sh op'), { goal: 'x' }), 400, 'invalid_vdb');
  assertEnvelope(await post(service, versioned(), { goal: 'x' }, null), 401, 'unauthenticated');
  assertEnvelope(await post(service, versioned(), { goal: 'x' }, 'not-a-known-token-at-all'), 401, 'unauthenticated');
  assertEnvelope(await post(service, versioned('answer', 'shop', '9'), { goal: 'x' }), 404, 'vdb_not_found');
  assertEnvelope(await post(service, '/api/v1/capabilities/answer/vdbs/nowhere/tasks', { goal: 'x' }), 404, 'vdb_not_found');
  assert.is(fake.calls().length, 0, 'nothing reached the runtime');
});

tasks('413: a request over maxBodyBytes, and a runtime document over the transport limit', async ({ service, fake }) => {
  assertEnvelope(await post(service, versioned(), { goal: 'x', externalContext: 'y'.repeat(5 * 1024 * 1024) }), 413, 'request_too_large');
  assertEnvelope(await post(service, versioned(), { goal: 'x', externalContext: 'y'.repeat(2 * 1024 * 1024) }), 413, 'request_too_large');
  assert.is(fake.calls().length, 0);
});

tasks('502 for a malformed answer or a refusal; 503 retryable when the runtime keeps failing; a transient failure is retried', async ({ service, fake }) => {
  fake.script = [{ kind: 'malformed' }];
  assertEnvelope(await post(service, versioned(), { goal: 'x' }), 502, 'runtime_protocol_error');
  fake.script = [{ kind: 'status', status: 422 }];
  assertEnvelope(await post(service, versioned(), { goal: 'x' }), 502, 'runtime_failed');
  fake.reset();
  fake.script = [{ kind: 'status', status: 500 }];
  const retried = await post(service, versioned(), { goal: 'x' });
  assert.is(retried.status, 200, JSON.stringify(retried.body));
  assert.is(fake.calls('start').length, 2, 'the start was retried once');
  fake.fallback = { kind: 'status', status: 503 };
  assertEnvelope(await post(service, versioned(), { goal: 'x' }), 503, 'runtime_unavailable', true);
});


tasks('503 context_unavailable (retryable) when the VDB\'s datasource does not answer', async ({ service, db, fake }) => {
  db.pingFails = true;
  assertEnvelope(await post(service, versioned(), { goal: 'x' }), 503, 'context_unavailable', true);
  assert.is(fake.calls().length, 0);
});

tasks('proposed queries run as the caller: outside the grants they are denied and nothing runs', async ({ service, fake }) => {
  fake.script = [{ kind: 'working', actions: 1, sql: 'select email from sales.customers' }, { kind: 'working', actions: 1, sql: 'select name from sales.products where id = 1' }];
  const reply = await post(service, versioned(), { goal: 'emails' }, ANALYST_TOKEN);
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  const [denied, served] = fake.calls('advance').map((call) => (call.body as TaskAdvanceDocument).observations[0]);
  assert.equal({ status: denied?.status, rows: denied?.rows, code: denied?.error?.code }, { status: 'denied', rows: [], code: 'forbidden' });
  assert.match(denied?.error?.message ?? '', /sales\.customers/);
  assert.equal({ status: served?.status, rows: served?.rows }, { status: 'ok', rows: [{ name: 'Sparkling Water 1L' }] });
  assert.equal(reply.body['usage'], { inputTokens: 0, outputTokens: 0, modelCalls: 0, serviceActions: 2, observationRows: 1, observationBytes: Buffer.byteLength(JSON.stringify(served?.rows)) });
});

tasks('a refused built-in and statements too complex are denied observations naming the rule; the task goes on', async ({ service, fake }) => {
  const hostile = [manyTerms(7_000), nestedSubqueries(1_800), longText(100_000), "select pg_read_file('/etc/passwd')"];
  fake.script = [...hostile.map((sql) => ({ kind: 'working' as const, actions: 1, sql })), { kind: 'working', actions: 1, sql: 'select count(*) as n from sales.products' }];
  const reply = await post(service, versioned(), { goal: 'break it' }, ANALYST_TOKEN);
  assert.is(reply.status, 200, JSON.stringify(reply.body).slice(0, 300));
  const observations = fake.calls('advance').map((call) => (call.body as TaskAdvanceDocument).observations[0]);
  assert.equal(observations.map((observation) => [observation?.status, observation?.error?.code]), [
    ['denied', 'statement_too_complex'], ['denied', 'statement_too_complex'], ['denied', 'statement_too_complex'],
    ['denied', 'function_not_allowed'], ['ok', undefined],
  ]);
  assert.match(observations[3]?.error?.message ?? '', /^function pg_read_file is not allowed/);
});

tasks('every budget ends the task in budget_exceeded naming it, and cancels the runtime task', async ({ service, fake }) => {
  const cases: { budget: string; setup: () => void; reason?: string }[] = [
    { budget: 'maxSteps', setup: () => { fake.fallback = { kind: 'working', actions: 1 }; } },
    { budget: 'maxServiceActions', setup: () => { fake.script = [{ kind: 'working', actions: 4 }]; } },
    { budget: 'maxObservationRows', setup: () => { fake.script = [{ kind: 'working', actions: 1, maxRows: 1e9, sql: 'select id from sales.orders' }]; } },
    // the first observation is cut at the budget (3 rows of about 510 bytes of 2000); the second finds no room for a row
    { budget: 'maxObservationBytes', setup: () => { fake.script = [1, 2].map(() => ({ kind: 'working' as const, actions: 1, maxRows: 5, sql: "select repeat('x', 500) as pad from sales.products" })); } },
    { budget: 'maxModelCalls', setup: () => { fake.script = [{ kind: 'ok', snapshot: usage({ inputTokens: 0, outputTokens: 0, modelCalls: 2 }) }]; } },
    { budget: 'maxInputTokens', setup: () => { fake.script = [{ kind: 'ok', snapshot: usage({ inputTokens: 101, outputTokens: 0, modelCalls: 1 }) }]; } },
    { budget: 'maxOutputTokens', setup: () => { fake.script = [{ kind: 'ok', snapshot: usage({ inputTokens: 0, outputTokens: 51, modelCalls: 1 }) }]; } },
    { budget: 'maxDurationSeconds', reason: 'deadline_exceeded', setup: () => { fake.fallback = { kind: 'working', actions: 0 }; } },
  ];
  for (const { budget, setup, reason = 'budget_exceeded' } of cases) {
    fake.reset();
    fake.script = [];
    fake.fallback = { kind: 'ok' };
    setup();
    const reply = await post(service, versioned('strict'), { goal: 'x' });
    assert.is(reply.status, 200, `${budget}: ${JSON.stringify(reply.body)}`);
    assert.is(reply.body['state'], 'budget_exceeded', budget);
    const stop = reply.body['stop'] as { reason: string; detail: string };
    assert.is(stop.reason, reason, budget);
    assert.ok(stop.detail.startsWith(budget), `${budget}: ${stop.detail}`);
    assert.is(fake.calls('cancel').length, 1, `${budget}: the runtime task was cancelled`);
  }
});

tasks('a client that disconnects does not cancel its task', async ({ service, fake }) => {
  fake.script = [{ kind: 'working', actions: 0 }, { kind: 'working', actions: 0 }, { kind: 'working', actions: 0 }, { kind: 'working', actions: 0 }];
  const abort = new AbortController();
  const pending = post(service, versioned(), { goal: 'x' }, ADMIN_TOKEN, abort.signal).catch((error: unknown) => error);
  await new Promise((resolve) => setTimeout(resolve, 120));
  abort.abort();
  assert.instance(await pending, Error);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  assert.is(fake.calls('read').length, 4, 'the service kept reading the task after the client left');
  assert.is(fake.calls('cancel').length, 0);
});

tasks('a runtime task that asks for input ends the call in input_required', async ({ service, fake }) => {
  fake.script = [{ kind: 'ok', snapshot: (request: FakeRouteRequest) => snapshotFor(request.ref, { state: 'input_required', stop: { reason: 'input_required', detail: 'which region?' } }) }];
  const reply = await post(service, versioned(), { goal: 'x' });
  assert.equal([reply.status, reply.body['state'], reply.body['stop']], [200, 'input_required', { reason: 'input_required', detail: 'which region?' }]);
});

tasks.run();

function usage(values: { inputTokens: number; outputTokens: number; modelCalls: number }) {
  return (request: FakeRouteRequest) => snapshotFor(request.ref, { usage: values });
}

const disabled = suite('Task API with the runtime disabled');
disabled('503 runtime_disabled, not retryable, with no-store', async () => {
  const fake = await FakeRuntime.start();
  const service = await startTestService({ config: taskConfig(fake, { enabled: false }), files: VDBS });
  try {
    const reply = await post(service, versioned(), { goal: 'x' });
    assertEnvelope(reply, 503, 'runtime_disabled', false);
  } finally {
    await service.close();
    await fake.close();
  }
});
disabled.run();

// its own service: the failures open the transport's circuit breaker, which the suite above must not see
const hanging = suite('Task API with a runtime that hangs');
hanging('the timeout cuts it off: 503 runtime_unavailable, retryable, after retries', async () => {
  const fake = await FakeRuntime.start();
  fake.fallback = { kind: 'hang' };
  const service = await startTestService({ config: taskConfig(fake), files: VDBS });
  try {
    assertEnvelope(await post(service, versioned(), { goal: 'x' }), 503, 'runtime_unavailable', true);
    assert.ok(fake.calls('start').length >= 2, 'the start was retried before giving up');
  } finally {
    await service.close();
    await fake.close();
  }
});
hanging.run();
