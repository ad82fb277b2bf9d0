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

/**
 * Two namespaces sharing names (datasets, a relationship, metrics, a model entry) over two datasources whose
 * relations have the same names; the second namespace's metric reads the first's metric and dataset.
 */
const SHOP = `version: 0.2.0.dev0
namespace: shop
semantic_model:
  - name: sales
    datasets:
      - name: orders
        source: retail_db.sales.orders
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: status, expression: status }
          - { name: revenue, expression: total }
      - name: customers
        source: retail_db.sales.customers
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: region, expression: region }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
    metrics:
      - { name: revenue, expression: SUM(orders.total) }
      - { name: order_count, expression: COUNT(*) }
`;
const AUDIT = `version: 0.2.0.dev0
namespace: audit
imports: [shop]
semantic_model:
  - name: sales
    datasets:
      - name: orders
        source: other_db.sales.orders
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: status, expression: status }
      - name: customers
        source: other_db.sales.customers
        primary_key: [id]
        fields:
          - { name: region, expression: region }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
    metrics:
      - { name: revenue, expression: SUM(orders.total) }
      - { name: shop_orders, expression: COUNT(shop.orders.id) }
      - { name: shop_revenue, expression: shop.revenue }
`;

test('names two namespaces share export apart: the document fits Ossie\'s schema, has one name per global element, and loaded again answers the same numbers', async () => {
  const seed = readFileSync(join(demoDescriptors, 'seed', 'retail.sql'), 'utf8');
  const module = (name: string, vdb: string, documents: Record<string, string>, datasources: string) => {
    const manifest = `name: ${name}\nversion: 1.0.0\nnamespace: ${name}\ndocuments:\n${Object.entries(documents).map(([path, text]) => `  - { path: ${path}, mediaType: application/vnd.osi+${path.endsWith('.json') ? 'json' : 'yaml'}, sha256: ${sha256Of(text)} }`).join('\n')}\n`;
    return {
      [`bundle/semantic/${name}/manifest.yaml`]: manifest,
      ...Object.fromEntries(Object.entries(documents).map(([path, text]) => [`bundle/semantic/${name}/${path}`, text])),
      [`bundle/vdbs/${vdb}.yaml`]: [
        `name: ${vdb}`, 'version: "1"', 'datasource: retail_db', 'schemas:', ...datasources.split(',').map((datasource) => `  - { name: sales, datasource: ${datasource} }`),
        'semantic:', `  module: { uri: semantic/${name}, name: ${name}, version: 1.0.0, sha256: ${sha256Of(manifest)} }`,
      ].join('\n') + '\n',
    };
  };
  const config = demoConfig({
    descriptors: './bundle',
    datasources: { retail_db: { adapter: 'pglite', init: ['seed/retail.sql'] }, other_db: { adapter: 'pglite', init: ['seed/retail.sql', 'seed/double.sql'] } },
  });
  // The second datasource's orders total twice as much, so a query reading the wrong one shows it.
  const seeds = { 'bundle/seed/retail.sql': seed, 'bundle/seed/double.sql': 'update sales.orders set total = total * 2;\n' };
  const first = await startTestService({ config, files: { ...seeds, ...module('twins', 'twins', { 'shop.osi.yaml': SHOP, 'audit.osi.yaml': AUDIT }, 'retail_db,other_db') } });
  let text: string;
  const ask = async (service: TestService, vdb: string, query: object) => {
    const response = await service.request(`/api/v1/semantic/vdbs/${vdb}/versions/1/query`, { method: 'POST', body: JSON.stringify(query), headers: { 'content-type': 'application/json' } });
    const body = await response.json() as { rows: unknown };
    assert.is(response.status, 200, JSON.stringify(body));
    return body.rows;
  };
  // Each question as the model of two namespaces asks it, and as the exported one does.
  const questions: [object, object][] = [
    [{ dimensions: ['shop.customers.region'], measures: [{ metric: 'shop.revenue', alias: 'revenue' }, { metric: 'shop.order_count', alias: 'order_count' }], orderBy: ['region'] }, { dimensions: ['customers.region'], measures: ['revenue', 'order_count'], orderBy: ['region'] }],
    [{ dimensions: ['audit.customers.region'], measures: [{ metric: 'audit.revenue', alias: 'revenue' }], orderBy: ['region'] }, { dimensions: ['audit_customers.region'], measures: [{ metric: 'audit_revenue', alias: 'revenue' }], orderBy: ['region'] }],
    [{ dimensions: ['shop.orders.status'], measures: [{ metric: 'shop.revenue', alias: 'revenue' }, 'SUM(shop.orders.revenue) AS field_sum'], orderBy: ['status'] }, { dimensions: ['orders.status'], measures: ['revenue', 'SUM(orders.revenue) AS field_sum'], orderBy: ['status'] }],
    [{ measures: ['shop_orders', 'shop_revenue'] }, { measures: ['shop_orders', 'shop_revenue'] }],
  ];
  const expected: unknown[] = [];
  try {
    const detail = await (await first.request('/api/v1/admin/semantic/vdbs/twins/versions/1')).json() as { state: string; diagnostics: unknown[] };
    assert.is(detail.state, 'active', JSON.stringify(detail.diagnostics));
    text = await (await first.request('/api/v1/admin/semantic/vdbs/twins/versions/1/model?format=ossie')).text();
    for (const [asked] of questions) expected.push(await ask(first, 'twins', asked));
  } finally {
    await first.close();
  }
  const document = JSON.parse(text) as { version: string; semantic_model: { name: string; datasets: { name: string; source: string }[]; relationships: { name: string }[]; metrics: { name: string }[] }[] };
  assert.is(ossieSchemaProblem(document.version, document), undefined);
  const globals = document.semantic_model.flatMap((entry) => [...entry.datasets, ...entry.relationships, ...entry.metrics].map((element) => element.name.toLowerCase()));
  assert.equal(globals.length, new Set(globals).size, `one name per global element: ${globals.join(', ')}`);
  assert.equal(document.semantic_model.map((entry) => entry.name), ['sales', 'audit_sales']);
  assert.equal(document.semantic_model.flatMap((entry) => entry.datasets.map((dataset) => `${dataset.name} ${dataset.source}`)),
    ['orders retail_db.sales.orders', 'customers retail_db.sales.customers', 'audit_orders other_db.sales.orders', 'audit_customers other_db.sales.customers']);
  const again = await startTestService({ config, files: { ...seeds, ...module('exported', 'exported', { 'model.json': text }, 'retail_db,other_db') } });
  try {
    const detail = await (await again.request('/api/v1/admin/semantic/vdbs/exported/versions/1')).json() as { state: string; diagnostics: unknown[] };
    assert.is(detail.state, 'active', JSON.stringify(detail.diagnostics));
    for (const [index, [, exported]] of questions.entries()) assert.equal(await ask(again, 'exported', exported), expected[index], JSON.stringify(exported));
    assert.equal(await (await again.request('/api/v1/admin/semantic/vdbs/exported/versions/1/model')).json(), document);
  } finally {
    await again.close();
  }
});

test.run();
