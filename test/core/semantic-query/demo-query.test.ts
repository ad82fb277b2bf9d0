import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { coreTokens } from '../../../core/service-tokens.js';
import { ANALYST_TOKEN, startTestService, type TestService } from '../../support/test-service.js';

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

const PAID_BY_MONTH = {
  dimensions: ['customers.region', { field: 'orders.ordered_at', grain: 'month', alias: 'month' }],
  measures: ['revenue', { expression: 'COUNT(orders.id)', alias: 'orders' }],
  where: "orders.status IN ('paid', 'shipped')",
  orderBy: [{ field: 'region' }, { field: 'month' }],
};

test('revenue by region for paid orders by month, as YAML and as JSON, equals the SQL an analyst would write', async ({ service }) => {
  const yaml = await post(service, PAID_BY_MONTH, { yaml: true, token: ANALYST_TOKEN });
  assert.is(yaml.status, 200, JSON.stringify(yaml.body));
  assert.equal(yaml.body['columns'], [
    { name: 'region', logicalType: 'string' }, { name: 'month', logicalType: 'timestamp' }, { name: 'revenue', logicalType: 'decimal' }, { name: 'orders', logicalType: 'bigint' },
  ]);
  const json = await post(service, PAID_BY_MONTH);
  assert.equal(json.body, yaml.body);
  const raw = await service.container.resolve(coreTokens.datasources).open('retail_db');
  const expected = await raw.query(`select c.region, date_trunc('month', o.ordered_at) as month, sum(case when o.status = 'cancelled' then 0 else o.total end) as revenue, count(o.id) as orders
    from sales.orders o left join sales.customers c on o.customer_id = c.id where o.status in ('paid', 'shipped') group by 1, 2 order by 1, 2`, []);
  assert.equal(yaml.body['rows'], expected.rows);
  assert.is(yaml.body['rowCount'], expected.rowCount);
});

test('explain answers the statement and its bound values without running it', async ({ service }) => {
  const reply = await post(service, { dimensions: ['customers.region'], measures: ['revenue'], where: "orders.status = 'paid'", limit: 5 }, { path: `${ROUTE}?explain=true` });
  assert.is(reply.status, 200);
  assert.equal(reply.body['params'], ['paid', 5]);
  assert.match(String(reply.body['sql']), /WHERE \("orders"\."status" = \?\) GROUP BY "customers"\."region"\) SELECT "g0"\."d0" AS "region", "g0"\."m0" AS "revenue" FROM "g0" LIMIT \?$/);
});

test('the analyst may not group by customers\' emails: 403 before any SQL runs', async ({ service }) => {
  const reply = await post(service, { dimensions: ['customers.email'], measures: ['revenue'] }, { token: ANALYST_TOKEN });
  assert.equal([reply.status, reply.body['code']], [403, 'forbidden']);
  assert.match(String(reply.body['message']), 'sales.customers.email');
});

test('a value or an operator the database refuses for its types is the caller\'s 400, not a failure of the service', async ({ service }) => {
  const value = await post(service, { dimensions: ['customers.region'], measures: ['revenue'], where: "orders.total = 'a lot'" });
  assert.equal([value.status, value.body['code'], (value.body['details'] as Record<string, unknown>)['osiCode']], [400, 'semantic_query_invalid', 'E_INVALID_EXPRESSION']);
  const operator = await post(service, { measures: [{ expression: 'SUM(orders.status)' }] });
  assert.equal([operator.status, operator.body['code']], [400, 'semantic_query_invalid']);
});

test('the OpenAPI document describes the route', async ({ service }) => {
  const document = (await (await service.request('/api/v1/openapi.json')).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
  assert.is(document.paths['/api/v1/semantic/vdbs/{vdb}/versions/{version}/query']?.['post']?.operationId, 'semanticQuery');
});

test.run();
