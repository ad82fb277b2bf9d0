import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sampleValue, samplesOf } from '../../support/prometheus-text.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const QUERY_ROUTE = '/api/v1/query/perform/:name';
const JSON_BODY = { 'content-type': 'application/json' };

async function scrape(service: TestService, token: string | null = null): Promise<Map<string, number>> {
  const response = await service.request('/observe/metrics', { token });
  assert.is(response.status, 200);
  return samplesOf(await response.text());
}

/**
 * The samples once `settled` holds of them. A request is counted when its answer has been written, which
 * the client may see a moment before; a few scrapes bound the wait.
 */
async function scrapeUntil(service: TestService, settled: (samples: Map<string, number>) => boolean): Promise<Map<string, number>> {
  let samples = await scrape(service);
  for (let attempt = 0; attempt < 20 && !settled(samples); attempt += 1) {
    await sleep(25);
    samples = await scrape(service);
  }
  return samples;
}

function post(service: TestService, path: string, body: unknown, token = ANALYST_TOKEN): Promise<Response> {
  return service.request(path, { method: 'POST', headers: JSON_BODY, body: JSON.stringify(body), token });
}

const metrics = suite<{ service: TestService }>('GET /observe/metrics (demo bundle, PGlite)');

metrics.before(async (context) => {
  context.service = await startTestService();
});
metrics.after(async ({ service }) => service?.close());

metrics('answers the Prometheus text format without credentials, with process metrics', async ({ service }) => {
  const response = await service.request('/observe/metrics', { token: null });
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  assert.is(response.headers.get('cache-control'), 'no-store');
  const text = await response.text();
  assert.match(text, /^# HELP vdb_http_requests_total /m);
  assert.match(text, /^process_cpu_user_seconds_total /m);
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);
});

metrics('3 query calls and 1 failing call: requests by route pattern and status, statements by datasource and outcome', async ({ service }) => {
  const before = await scrape(service);
  for (const customerId of [7, 8, 9]) assert.is((await post(service, '/api/v1/query/perform/customer_orders', { customerId, limit: 1 })).status, 200);
  assert.is((await post(service, '/api/v1/query/perform/customer_orders', {})).status, 400);
  const requests = (samples: Map<string, number>, status: string) => sampleValue(samples, 'vdb_http_requests_total', { method: 'POST', route: QUERY_ROUTE, status })
    - sampleValue(before, 'vdb_http_requests_total', { method: 'POST', route: QUERY_ROUTE, status });
  const after = await scrapeUntil(service, (samples) => requests(samples, '200') >= 3 && requests(samples, '400') >= 1);
  assert.is(requests(after, '200'), 3);
  assert.is(requests(after, '400'), 1);
  const statements = (outcome: string) => sampleValue(after, 'vdb_statements_total', { datasource: 'retail_db', outcome })
    - sampleValue(before, 'vdb_statements_total', { datasource: 'retail_db', outcome });
  // the failing call lacks a needed field: refused before any statement
  assert.equal(['ok', 'denied', 'timeout', 'cancelled', 'failed'].map(statements), [3, 0, 0, 0, 0]);
  const latency = (samples: Map<string, number>) => sampleValue(samples, 'vdb_http_request_duration_seconds_count', { method: 'POST', route: QUERY_ROUTE });
  assert.is(latency(after) - latency(before), 4);
  assert.ok(sampleValue(after, 'vdb_statement_duration_seconds_count', { datasource: 'retail_db' }) >= 3);
});

metrics('never labels a request with its URL: unknown paths count as unmatched', async ({ service }) => {
  assert.is((await service.request('/no/such/route/customer_orders', { token: null })).status, 404);
  const samples = await scrapeUntil(service, (current) => sampleValue(current, 'vdb_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
  assert.is(sampleValue(samples, 'vdb_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }), 1);
  assert.not.ok([...samples.keys()].some((key) => key.includes('customer_orders')), 'no label holds a URL or a definition name');
});

metrics('a statement the authorizer refuses counts as denied, one the database refuses as failed', async ({ service }) => {
  const before = await scrape(service);
  assert.is((await post(service, '/api/v1/actions/run/cancel_order', { orderId: 133 })).status, 403);
  assert.is((await post(service, '/api/v1/query/perform/customer_orders', { customerId: 'not a number' })).status, 400);
  const after = await scrape(service);
  const delta = (outcome: string) => sampleValue(after, 'vdb_statements_total', { datasource: 'retail_db', outcome })
    - sampleValue(before, 'vdb_statements_total', { datasource: 'retail_db', outcome });
  assert.equal(['ok', 'denied', 'failed'].map(delta), [0, 1, 1]);
});

metrics('a semantic query the grants refuse counts as denied, as every door\'s refusal does', async ({ service }) => {
  const before = await scrape(service);
  const refused = await post(service, '/api/v1/semantic/vdbs/retail/versions/1/query', { dimensions: ['customers.email'], measures: ['revenue'] });
  assert.is(refused.status, 403);
  const after = await scrape(service);
  const delta = (outcome: string) => sampleValue(after, 'vdb_statements_total', { datasource: 'retail_db', outcome })
    - sampleValue(before, 'vdb_statements_total', { datasource: 'retail_db', outcome });
  assert.equal(['ok', 'denied', 'failed'].map(delta), [0, 1, 0]);
});

/** Runs a task of the `answer` capability on retail 1; answers its final state. */
async function task(service: TestService, goal: string): Promise<string> {
  const response = await post(service, '/api/v1/capabilities/answer/vdbs/retail/versions/1/tasks', { goal });
  return (await response.json() as { state: string }).state;
}

metrics('tasks by final state', async ({ service }) => {
  assert.is(await task(service, 'total sales by region'), 'completed');
  assert.is(await task(service, 'select email from sales.customers'), 'failed');
  const samples = await scrape(service);
  assert.is(sampleValue(samples, 'vdb_tasks_total', { capability: 'answer', state: 'completed' }), 1);
  assert.is(sampleValue(samples, 'vdb_tasks_total', { capability: 'answer', state: 'failed' }), 1);
  assert.is(sampleValue(samples, 'vdb_task_budget_stops_total', { capability: 'answer', budget: 'maxObservationRows' }), 0);
});

metrics('a budget stop counts the task as budget_exceeded and names the budget', async () => {
  // no row may be observed: the answer's query needs five
  const tight = await startTestService({ config: demoConfig({ capabilities: [{ name: 'answer', budgets: { maxObservationRows: 0 } }] }) });
  try {
    assert.is(await task(tight, 'total sales by region'), 'budget_exceeded');
    const samples = await scrape(tight);
    assert.is(sampleValue(samples, 'vdb_tasks_total', { capability: 'answer', state: 'budget_exceeded' }), 1);
    assert.is(sampleValue(samples, 'vdb_task_budget_stops_total', { capability: 'answer', budget: 'maxObservationRows' }), 1);
  } finally {
    await tight.close();
  }
});

metrics('VDB activation states from the semantic registry, and the pool of the datasource', async ({ service }) => {
  const samples = await scrape(service);
  const states = ['active', 'invalid', 'catalogOnly', 'compileFailed'].map((state) => sampleValue(samples, 'vdb_semantic_activations', { state }));
  // retail 1 is active; retail 2's model has a deliberate binding error; retail-crm has no model
  assert.equal(states, [1, 1, 1, 0]);
  const pool = ['used', 'free', 'pending'].map((state) => samples.get(`vdb_datasource_pool_connections{datasource="retail_db",state="${state}"}`));
  assert.ok(pool.every((count) => typeof count === 'number' && count >= 0), `pool gauges: ${pool.join(', ')}`);
});

metrics.run();

const guarded = suite<{ service: TestService }>('GET /observe/metrics with observe.metrics.auth: admin');

guarded.before(async (context) => {
  context.service = await startTestService({ config: demoConfig({ observe: { metrics: { auth: 'admin' } } }) });
});
guarded.after(async ({ service }) => service?.close());

guarded('answers 401 without credentials and 403 without an admin role, as the admin API', async ({ service }) => {
  const anonymous = await service.request('/observe/metrics', { token: null });
  assert.is(anonymous.status, 401);
  assert.is((await anonymous.json() as { code: string }).code, 'credentials_missing');
  const analyst = await service.request('/observe/metrics', { token: ANALYST_TOKEN });
  assert.is(analyst.status, 403);
  assert.is((await analyst.json() as { code: string }).code, 'forbidden');
});

guarded('an admin reads them; each service counts only its own requests', async ({ service }) => {
  const samples = await scrape(service, ADMIN_TOKEN);
  assert.is(sampleValue(samples, 'vdb_http_requests_total', { method: 'GET', route: '/observe/metrics', status: '401' }), 1);
  assert.is(sampleValue(samples, 'vdb_http_requests_total', { method: 'GET', route: '/observe/metrics', status: '403' }), 1);
  // the other suite's service ran queries in this process; none of them is counted here
  assert.is(sampleValue(samples, 'vdb_http_requests_total', { method: 'POST', route: QUERY_ROUTE, status: '200' }), 0);
});

guarded.run();
