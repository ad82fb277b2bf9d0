import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startReferenceRuntimeServer } from '../../../plugins/runtime-reference/standalone.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

interface Snapshot {
  state: string;
  artifacts: { id: string; kind: string; content: { contentType: string; data: string } }[];
  usage: Record<string, number>;
  stop: { reason: string; detail: string };
}

const RUNTIME_TOKEN = 'reference-runtime-token-42';
const path = '/api/v1/capabilities/answer/vdbs/retail/versions/1/tasks';

async function task(service: TestService, goal: string, token = ADMIN_TOKEN): Promise<{ status: number; body: Snapshot }> {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify({ goal }), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Snapshot };
}

const decoded = (snapshot: Snapshot, contentType: string) => {
  const artifact = snapshot.artifacts.find((candidate) => candidate.content.contentType === contentType);
  return artifact ? Buffer.from(artifact.content.data, 'base64').toString('utf8') : undefined;
};

const inProcess = suite<{ service: TestService }>('Task API with the reference runtime in process, on the demo');
inProcess.before(async (context) => {
  context.service = await startTestService();
});
inProcess.after(async ({ service }) => service?.close());

inProcess('a goal naming a metric and a dimension is answered from the semantic package: table (JSON, CSV), answer, query', async ({ service }) => {
  const { status, body } = await task(service, 'total sales by region');
  assert.is(status, 200, JSON.stringify(body));
  assert.equal([body.state, body.stop.reason], ['completed', 'completed']);
  assert.equal(body.usage, { ...body.usage, modelCalls: 0, inputTokens: 0, outputTokens: 0, serviceActions: 1, observationRows: 5 });
  const table = JSON.parse(decoded(body, 'application/json') ?? 'null') as { columns: { name: string }[]; rows: Record<string, string>[] };
  assert.equal(table.columns.map((column) => column.name), ['region', 'revenue']);
  assert.equal(table.rows.map((row) => row['region']).sort(), ['Central', 'East', 'North', 'South', 'West']);
  assert.match(decoded(body, 'text/csv') ?? '', /^region,revenue\r?\n/);
  assert.match(decoded(body, 'text/markdown') ?? '', /\| region \| revenue \|/);
  // The runtime asked for a semantic query; the service compiled and ran it.
  assert.equal((JSON.parse(decoded(body, 'application/vnd.vdb.semantic-query+json') ?? 'null') as { measures: unknown }).measures, [{ metric: 'revenue' }]);
  assert.equal(body.artifacts.map((artifact) => artifact.kind).sort(), ['answer', 'query', 'table', 'table']);
});

inProcess('"revenue by region for paid orders by month": the runtime plans a semantic query with a filter and a grain, the service compiles it, binds "paid" and runs it as the analyst', async ({ service }) => {
  const { status, body } = await task(service, 'revenue by region for paid orders by month', ANALYST_TOKEN);
  assert.is(status, 200, JSON.stringify(body));
  assert.is(body.state, 'completed', JSON.stringify(body.stop));
  const table = JSON.parse(decoded(body, 'application/json') ?? 'null') as { columns: { name: string }[]; rows: Record<string, string>[] };
  assert.equal(table.columns.map((column) => column.name), ['region', 'month', 'revenue']);
  const raw = await service.container.resolve(coreTokens.datasources).open('retail_db');
  const paid = await raw.query(`select count(distinct (c.region, date_trunc('month', o.ordered_at))) as groups from sales.orders o left join sales.customers c on c.id = o.customer_id where o.status = 'paid'`, []);
  assert.is(String(table.rows.length), String(paid.rows[0]?.['groups']));
  assert.match(decoded(body, 'text/markdown') ?? '', '**revenue by region, month for status paid**');
});

inProcess('a SELECT goal runs as it is; one outside the caller\'s grants is denied and the task fails with the reason', async ({ service }) => {
  const select = await task(service, 'select name from sales.products where id = 1', ANALYST_TOKEN);
  assert.is(select.body.state, 'completed', JSON.stringify(select.body));
  assert.equal((JSON.parse(decoded(select.body, 'application/json') ?? 'null') as { rows: unknown[] }).rows, [{ name: 'Sparkling Water 1L' }]);
  const denied = await task(service, 'select email from sales.customers', ANALYST_TOKEN);
  assert.equal([denied.status, denied.body.state, denied.body.stop.reason], [200, 'failed', 'runtime_failed']);
  assert.match(denied.body.stop.detail, /email/);
  assert.is(denied.body.usage['observationRows'], 0);
});

inProcess('a goal the runtime cannot map ends in input_required, listing what it knows', async ({ service }) => {
  const { body } = await task(service, 'tell me a story');
  assert.equal([body.state, body.stop.reason], ['input_required', 'input_required']);
  assert.match(body.stop.detail, /revenue/);
});

inProcess.run();

const standalone = suite('Task API over http to the standalone reference runtime, which requires the service\'s token');
standalone('a task completes through the http transport; the runtime refuses callers without the token', async () => {
  const runtime = await startReferenceRuntimeServer({ host: '127.0.0.1', port: 0, bearerToken: RUNTIME_TOKEN });
  const service = await startTestService({ config: demoConfig({ runtime: { transport: 'http', baseURL: runtime.url, bearerToken: RUNTIME_TOKEN } }) });
  try {
    const { status, body } = await task(service, 'order count by region');
    assert.is(status, 200, JSON.stringify(body));
    assert.is(body.state, 'completed');
    const anonymous = await fetch(`${runtime.url}/instances/x/vdbs/retail/versions/1/tasks/t1`);
    assert.is(anonymous.status, 401);
  } finally {
    await service.close();
    await runtime.close();
  }
});
standalone.run();
