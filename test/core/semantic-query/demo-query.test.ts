import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { startTestService, type TestService } from '../../support/test-service.js';

const ROUTE = '/api/v1/semantic/vdbs/retail/versions/1/query';

const test = suite<{ service: TestService }>('semantic query API on the demo (PGlite)');
test.before(async (context) => {
  context.service = await startTestService();
});
test.after(async ({ service }) => service?.close());

async function post(service: TestService, body: unknown, options: { token?: string; yaml?: boolean; path?: string } = {}) {
  const response = await service.request(options.path ?? ROUTE, {
    method: 'POST',
    body: options.yaml ? stringify(body) : JSON.stringify(body),
    headers: { 'content-type': options.yaml ? 'application/yaml' : 'application/json' },
    ...(options.token ? { token: options.token } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('revenue by region for paid orders by month', async ({ service }) => {
  const reply = await post(service, {
    dimensions: ['customers.region', { field: 'orders.ordered_at', grain: 'month', alias: 'month' }],
    measures: ['revenue', { expression: 'COUNT(orders.id)', alias: 'order_count' }],
    where: "orders.status IN ('paid', 'shipped')",
    orderBy: [{ field: 'region' }, { field: 'month' }],
  });
  assert.is(reply.status, 200, JSON.stringify(reply.body));
  console.log(JSON.stringify(reply.body).slice(0, 800));
});

test('explain', async ({ service }) => {
  const reply = await post(service, { dimensions: ['customers.region'], measures: ['revenue'], where: "orders.status = 'paid'", limit: 5 }, { path: `${ROUTE}?explain=true` });
  console.log(JSON.stringify(reply.body));
});

test.run();
