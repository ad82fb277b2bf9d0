import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ossieSchemaProblem } from '../../support/ossie-models.js';
import { sha256Of } from '../../support/semantic-test-support.js';
import { ANALYST_TOKEN, demoConfig, demoDescriptors, startTestService, type TestService } from '../../support/test-service.js';

/**
 * The admin export of an active model as an Apache Ossie document: it validates against Ossie's own JSON
 * Schema (the copy in test/fixtures/ossie, not the service's), carries no key of the service, and loaded
 * as the module of another VDB over the same data it answers the same queries with the same numbers.
 */
const test = suite<{ service: TestService }>('semantic model export as an Apache Ossie document');
test.before(async (context) => {
  context.service = await startTestService();
});
test.after(async ({ service }) => service?.close());

const EXPORT = '/api/v1/admin/semantic/vdbs/retail/versions/1/model?format=ossie';

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): Set<string> {
  const keys = new Set<string>();
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node !== null && typeof node === 'object') for (const [key, child] of Object.entries(node)) { keys.add(key); walk(child); }
  };
  walk(value);
  return keys;
}

test('retail 1 exports as an Ossie 0.2.0.dev0 document that Ossie\'s JSON Schema accepts, without the service\'s keys', async ({ service }) => {
  const response = await service.request(EXPORT);
  assert.is(response.status, 200);
  const document = await response.json() as { version: string; semantic_model: { name: string; datasets: { name: string; source: string; fields: { name: string; datatype?: string }[] }[]; metrics: { name: string }[] }[] };
  assert.is(ossieSchemaProblem(document.version, document), undefined);
  assert.is(document.version, '0.2.0.dev0');
  const keys = keysOf(document);
  for (const key of ['namespace', 'imports', 'binding', 'logical_type', 'access_modifier', 'role']) assert.not.ok(keys.has(key), key);
  const [model] = document.semantic_model;
  assert.not.ok(model && 'dialect' in model);
  assert.is(model?.name, 'retail_sales');
  assert.equal(model?.datasets.map((dataset) => dataset.source), ['sales.customers', 'sales.products', 'sales.orders', 'sales.order_lines']);
  assert.is(model?.datasets[0]?.fields.find((field) => field.name === 'id')?.datatype, 'Integer');
  assert.ok(model?.metrics.some((metric) => metric.name === 'average_order_value'));
  // Without format, the same document.
  assert.equal(await (await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1/model')).json(), document);
});

test('a VDB without a package answers 409 with its detail; an unknown format 400; an analyst 403; an unknown VDB 404', async ({ service }) => {
  const unavailable = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/2/model?format=ossie');
  assert.is(unavailable.status, 409);
  const body = await unavailable.json() as { code: string; state: string; name: string };
  assert.equal([body.code, body.name, body.state], ['semantic_package_unavailable', 'retail', 'invalid']);
  const yaml = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1/model?format=dbt');
  assert.equal([yaml.status, (await yaml.json() as { code: string }).code], [400, 'invalid_request']);
  assert.is((await service.request(EXPORT, { token: ANALYST_TOKEN })).status, 403);
  assert.is((await service.request('/api/v1/admin/semantic/vdbs/retail/versions/9/model')).status, 404);
});

const QUERIES = [
  { dimensions: ['customers.region'], measures: ['revenue', 'order_count', 'average_order_value'] },
  { dimensions: ['orders.status'], measures: ['revenue', 'customer_count'] },
  { dimensions: ['products.category'], measures: ['units_sold', 'product_sales'] },
  { measures: ['revenue_per_customer', 'order_count'] },
];

async function answers(service: TestService, vdb: string): Promise<unknown[]> {
  const results: unknown[] = [];
  for (const query of QUERIES) {
    const response = await service.request(`/api/v1/semantic/vdbs/${vdb}/versions/1/query`, { method: 'POST', body: JSON.stringify({ ...query, orderBy: query.dimensions?.map((dimension) => dimension.split('.')[1]) }), headers: { 'content-type': 'application/json' } });
    const body = await response.json() as { rows: unknown };
    assert.is(response.status, 200, JSON.stringify(body));
    results.push(body.rows);
  }
  return results;
}

test('round trip: the export, loaded unchanged as the module of another VDB over the same datasource, gives the same numbers', async ({ service }) => {
  const text = await (await service.request(EXPORT)).text();
  const manifest = `name: retail-export\nversion: 1.0.0\nnamespace: exported\ndocuments:\n  - { path: model.json, mediaType: application/vnd.osi+json, sha256: ${sha256Of(text)} }\n`;
  const files = {
    'bundle/semantic/exported/manifest.yaml': manifest,
    'bundle/semantic/exported/model.json': text,
    'bundle/seed/retail.sql': readFileSync(join(demoDescriptors, 'seed', 'retail.sql'), 'utf8'),
    'bundle/vdbs/exported.yaml': [
      'name: exported', 'version: "1"', 'datasource: retail_db', 'schemas:', '  - { name: sales, include: [customers, products, orders, order_lines] }',
      'semantic:', `  module: { uri: semantic/exported, name: retail-export, version: 1.0.0, sha256: ${sha256Of(manifest)} }`,
    ].join('\n') + '\n',
  };
  const again = await startTestService({ config: demoConfig({ descriptors: './bundle' }), files });
  try {
    const detail = await (await again.request('/api/v1/admin/semantic/vdbs/exported/versions/1')).json() as { state: string; diagnostics: { severity: string; message: string }[] };
    assert.is(detail.state, 'active', JSON.stringify(detail.diagnostics));
    assert.equal(await answers(again, 'exported'), await answers(service, 'retail'));
    // And exported again, the same model.
    const twice = await (await again.request('/api/v1/admin/semantic/vdbs/exported/versions/1/model')).json();
    assert.equal(twice, JSON.parse(text));
  } finally {
    await again.close();
  }
});

test.run();
