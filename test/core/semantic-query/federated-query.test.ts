/**
 * The semantic route over a model whose datasets live in two datasources (docs/federation.md): orders and
 * customers in retail_db, the sales regions in crm_db (the demo's two seeds, each in its own PGlite). A query
 * over both is written in PostgreSQL's dialect and run through the federated plan, as the caller on each; its
 * answer is the hand-written statement's on one PostgreSQL (PGlite, collation C) holding both seeds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { sharedCrmPglite, sharedPglite } from '../../support/shared-pglite.js';
import { sha256Of } from '../../support/semantic-test-support.js';
import { mcpClient } from '../../support/mcp-service.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, demoDescriptors, startTestService, type TestService } from '../../support/test-service.js';
import { canonicalValue, pgliteOracle, type Oracle } from '../federation/corpus-oracle.js';

const MODEL = `namespace: shopfed
semantic_model:
  - name: shopfed
    datasets:
      - name: orders
        source: sales.orders
        primary_key: [id]
        fields:
          - { name: id, expression: { dialects: [{ dialect: ANSI_SQL, expression: id }] }, logical_type: integer }
          - { name: status, expression: { dialects: [{ dialect: ANSI_SQL, expression: status }] }, logical_type: string }
          - { name: total, expression: { dialects: [{ dialect: ANSI_SQL, expression: total }] }, logical_type: decimal }
          - { name: ordered_at, expression: { dialects: [{ dialect: ANSI_SQL, expression: ordered_at }] }, logical_type: timestamp, dimension: { is_time: true } }
          - { name: customer_id, expression: { dialects: [{ dialect: ANSI_SQL, expression: customer_id }] }, logical_type: integer }
          - { name: region_manager, expression: { dialects: [{ dialect: ANSI_SQL, expression: regions.manager }] }, logical_type: string }
      - name: customers
        source: sales.customers
        primary_key: [id]
        fields:
          - { name: id, expression: { dialects: [{ dialect: ANSI_SQL, expression: id }] }, logical_type: integer }
          - { name: region, expression: { dialects: [{ dialect: ANSI_SQL, expression: region }] }, logical_type: string }
      - name: regions
        source: crm.regions
        primary_key: [name]
        fields:
          - { name: name, expression: { dialects: [{ dialect: ANSI_SQL, expression: name }] }, logical_type: string }
          - { name: manager, expression: { dialects: [{ dialect: ANSI_SQL, expression: manager }] }, logical_type: string }
          - { name: revenue_target, expression: { dialects: [{ dialect: ANSI_SQL, expression: revenue_target }] }, logical_type: decimal }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
      - { name: customers_to_regions, from: customers, to: regions, from_columns: [region], to_columns: [name] }
    metrics:
      - { name: revenue, expression: { dialects: [{ dialect: ANSI_SQL, expression: SUM(orders.total) }] } }
      - { name: order_count, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(orders.id) }] } }
      - { name: average_order, expression: { dialects: [{ dialect: ANSI_SQL, expression: AVG(orders.total) }] } }
      - { name: target_weighted, expression: { dialects: [{ dialect: ANSI_SQL, expression: "SUM(orders.total * regions.revenue_target)" }] } }
      - { name: managed_orders, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(orders.region_manager) }] } }
`;

function bundle(): Record<string, string> {
  const manifest = `name: shopfed-semantic\nversion: 1.0.0\nnamespace: shopfed\ndocuments:\n  - path: shopfed.osi.yaml\n    mediaType: application/vnd.osi+yaml\n    sha256: ${sha256Of(MODEL)}\n`;
  return {
    'bundle/semantic/shopfed/manifest.yaml': manifest,
    'bundle/semantic/shopfed/shopfed.osi.yaml': MODEL,
    'bundle/vdbs/shopfed.yaml': `name: shopfed
version: "1"
datasource: retail_db
schemas:
  - { name: sales, include: [orders, customers] }
  - { name: crm, datasource: crm_db }
semantic:
  activationFailurePolicy: blockStartup
  module: { uri: semantic/shopfed, name: shopfed-semantic, version: 1.0.0, sha256: ${sha256Of(manifest)} }
dataRoles:
  - name: analyst
    grants: [{ resource: sales, allow: [select] }, { resource: crm, allow: [select] }]
  - name: clerk
    grants: [{ resource: sales, allow: [select] }, { resource: crm.regions, allow: [select], columns: [name, manager] }]
`,
  };
}

interface Answer {
  status: number;
  body: { rows?: Record<string, unknown>[]; columns?: { name: string; logicalType: string }[]; code?: string; message?: string; sources?: { datasource: string; sql: string }[]; engine?: { sql: string }; sql?: string };
}

async function ask(service: TestService, query: unknown, explain = false, token = ANALYST_TOKEN): Promise<Answer> {
  const response = await service.request(`/api/v1/semantic/vdbs/shopfed/versions/1/query${explain ? '?explain=true' : ''}`, {
    method: 'POST', body: JSON.stringify(query), headers: { 'content-type': 'application/json' }, token,
  });
  return { status: response.status, body: await response.json() as Answer['body'] };
}

/** An answer's rows as canonical text, in its column order (values of the oracle and of the route alike). */
function rowsOf(answer: Answer): string[] {
  const names = (answer.body.columns ?? []).map((column) => column.name);
  return (answer.body.rows ?? []).map((row) => JSON.stringify(names.map((name) => (row[name] === null ? null : String(row[name])))));
}

const test = suite<{ service: TestService; oracle: Oracle }>('semantic queries over datasets of two datasources');

/**
 * The shared datasources' rows now, as SQL the oracle runs: suites before this one in the process (the
 * actions') write into the shared retail_db, so the seeds alone are not what the service reads.
 */
async function currentRows(source: Datasource, tables: readonly string[]): Promise<string[]> {
  const inserts: string[] = [];
  for (const table of tables) {
    const result = await source.query(`select coalesce(json_agg(t), '[]')::text as rows from ${table} t`, []);
    const rows = String(result.rows[0]?.rows).replaceAll("'", "''");
    inserts.push(`insert into ${table} select * from json_populate_recordset(null::${table}, '${rows}')`);
  }
  return [`truncate ${tables.join(', ')} cascade`, ...inserts];
}

test.before(async (context) => {
  const seeds = ['retail.sql', 'crm.sql'].map((file) => readFileSync(join(demoDescriptors, 'seed', file), 'utf8'));
  const retail = await sharedPglite();
  const crm = await sharedCrmPglite();
  context.oracle = await pgliteOracle([...seeds, ...await currentRows(retail, ['sales.customers', 'sales.orders']), ...await currentRows(crm, ['crm.regions'])]);
  context.service = await startTestService({
    config: demoConfig({ descriptors: './bundle', mcp: { enabled: true } }),
    files: bundle(),
    datasources: { retail_db: retail, crm_db: crm },
  });
});

test.after(async ({ service, oracle }) => {
  await service?.close();
  await oracle?.close();
});

test('revenue and orders by region manager: the hand-written statement\'s answer on one PostgreSQL', async ({ service, oracle }) => {
  const answer = await ask(service, { dimensions: ['regions.manager'], measures: ['revenue', 'order_count'], orderBy: [{ field: 'regions.manager' }] });
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  const expected = await oracle.run(`select r.manager, sum(o.total) as revenue, count(o.id) as order_count
    from sales.orders o left join sales.customers c on c.id = o.customer_id left join crm.regions r on r.name = c.region
    group by r.manager order by r.manager`);
  assert.equal(answer.body.columns?.map((column) => column.logicalType), ['string', 'decimal', 'bigint']);
  assert.equal(rowsOf(answer), expected.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, expected.types[index] ?? 0)))));
});

test('a filter on one source and a dimension of each: pushed where it can be, the same answer', async ({ service, oracle }) => {
  const answer = await ask(service, {
    dimensions: ['regions.name', 'orders.status'], measures: ['revenue'],
    where: [{ field: 'orders.status', operator: 'in', values: ['paid', 'shipped'] }],
    orderBy: [{ field: 'regions.name' }, { field: 'orders.status' }],
  });
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  const expected = await oracle.run(`select r.name, o.status, sum(o.total) as revenue
    from sales.orders o left join sales.customers c on c.id = o.customer_id left join crm.regions r on r.name = c.region
    where o.status in ('paid', 'shipped') group by r.name, o.status order by r.name, o.status`);
  assert.ok(expected.rows.length > 5, 'the oracle answers several groups');
  assert.equal(rowsOf(answer), expected.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, expected.types[index] ?? 0)))));
});

test('explain: true answers the federated plan: a statement per source, each in its dialect, and the engine\'s', async ({ service }) => {
  const answer = await ask(service, { dimensions: ['regions.manager'], measures: ['revenue'] }, true);
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  // orders left join customers live in retail_db: one statement there, summed by the customers' region
  assert.equal(answer.body.sources?.map((source) => source.datasource).sort(), ['crm_db', 'retail_db']);
  assert.match(answer.body.sources?.find((source) => source.datasource === 'crm_db')?.sql ?? '', /FROM "crm"\."regions"/);
  assert.match(answer.body.sources?.find((source) => source.datasource === 'retail_db')?.sql ?? '', /LEFT JOIN "sales"\."customers" .* GROUP BY /);
  assert.type(answer.body.engine?.sql, 'string');
  const single = await ask(service, { dimensions: ['customers.region'], measures: ['revenue'] }, true);
  assert.is(single.status, 200, JSON.stringify(single.body));
  assert.type(single.body.sql, 'string', 'over one datasource the answer stays {sql, params}');
});

test('an average by a dimension of the other datasource: PostgreSQL\'s numeric average, digits and all', async ({ service, oracle }) => {
  const answer = await ask(service, { dimensions: ['regions.manager'], measures: ['average_order'], orderBy: [{ field: 'regions.manager' }] });
  // the writer aggregates in a subquery: the engine passes the avg's exact sum and count on to the output, divided as PostgreSQL divides
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  const expected = await oracle.run(`select r.manager, avg(o.total) as average_order
    from sales.orders o left join sales.customers c on c.id = o.customer_id left join crm.regions r on r.name = c.region
    group by r.manager order by r.manager`);
  assert.equal(rowsOf(answer), expected.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, expected.types[index] ?? 0)))));
});

test('a month grain of a timestamptz over both datasources: the hand-written statement\'s answer (truncated in UTC); over one datasource it answers too', async ({ service, oracle }) => {
  const month = { field: 'orders.ordered_at', grain: 'month', alias: 'month' };
  const across = await ask(service, { dimensions: ['regions.manager', month], measures: ['revenue'] });
  assert.is(across.status, 200, JSON.stringify(across.body));
  const expected = await oracleRows(oracle, `select r.manager, to_char(date_trunc('month', o.ordered_at), 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), sum(o.total) ${ACROSS} group by 1, 2`);
  assert.equal(rowsOf(across).sort(), expected.sort());
  const single = await ask(service, { dimensions: ['customers.region', month], measures: ['revenue'] });
  assert.is(single.status, 200, JSON.stringify(single.body));
});

/** The oracle's rows as canonical text, as `rowsOf` writes the route's. */
async function oracleRows(oracle: Oracle, sql: string): Promise<string[]> {
  const expected = await oracle.run(sql);
  return expected.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, expected.types[index] ?? 0))));
}

const ACROSS = 'from sales.orders o left join sales.customers c on c.id = o.customer_id left join crm.regions r on r.name = c.region';

test('a metric that reads datasets of both datasources, by a dimension of either: the hand-written statement\'s answer', async ({ service, oracle }) => {
  const byManager = await ask(service, { dimensions: ['regions.manager'], measures: ['target_weighted', 'revenue'], orderBy: [{ field: 'regions.manager' }] });
  assert.is(byManager.status, 200, JSON.stringify(byManager.body));
  assert.equal(rowsOf(byManager), await oracleRows(oracle, `select r.manager, sum(o.total * r.revenue_target), sum(o.total) ${ACROSS} group by r.manager order by r.manager`));
  const byStatus = await ask(service, { dimensions: ['orders.status'], measures: ['target_weighted'], orderBy: [{ field: 'orders.status' }] });
  assert.is(byStatus.status, 200, JSON.stringify(byStatus.body));
  assert.equal(rowsOf(byStatus), await oracleRows(oracle, `select o.status, sum(o.total * r.revenue_target) ${ACROSS} group by o.status order by o.status`));
  assert.ok(rowsOf(byStatus).length > 1, 'several statuses');
});

test('a field of orders enriched from the other datasource: as the dimension and inside a metric', async ({ service, oracle }) => {
  const answer = await ask(service, { dimensions: ['orders.region_manager'], measures: ['revenue', 'managed_orders'], orderBy: [{ field: 'orders.region_manager' }] });
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(rowsOf(answer), await oracleRows(oracle, `select r.manager, sum(o.total), count(r.manager) ${ACROSS} group by r.manager order by r.manager`));
  const filtered = await ask(service, { dimensions: ['customers.region'], measures: ['managed_orders'], where: [{ field: 'orders.region_manager', operator: 'in', values: ['Ines Moreau', 'Jonas Ito'] }], orderBy: [{ field: 'customers.region' }] });
  assert.is(filtered.status, 200, JSON.stringify(filtered.body));
  assert.equal(rowsOf(filtered), await oracleRows(oracle, `select c.region, count(r.manager) ${ACROSS} where r.manager in ('Ines Moreau', 'Jonas Ito') group by c.region order by c.region`));
});

test('explain of a query using them: the federated plan, a statement on each datasource; a query not using them stays on one', async ({ service }) => {
  for (const query of [{ measures: ['target_weighted'] }, { dimensions: ['orders.status'], measures: ['managed_orders'] }]) {
    const answer = await ask(service, query, true);
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.sources?.map((source) => source.datasource).sort(), ['crm_db', 'retail_db'], JSON.stringify(query));
    assert.type(answer.body.engine?.sql, 'string');
  }
  const single = await ask(service, { dimensions: ['orders.status'], measures: ['revenue'] }, true);
  assert.type(single.body.sql, 'string', 'over one datasource the answer stays {sql, params}');
});

test('MCP: describe_vdb and list_metrics mark them as reading both datasources, cut to the caller\'s grants', async ({ service }) => {
  const client = await mcpClient(service, ANALYST_TOKEN);
  const clerk = await mcpClient(service, ADMIN_TOKEN);
  try {
    const metrics = (await client.callTool({ name: 'list_metrics', arguments: { vdb: 'shopfed', version: '1' } })).structuredContent as { metrics: { name: string; datasources?: string[] }[] };
    assert.equal(metrics.metrics.find((metric) => metric.name === 'target_weighted')?.datasources, ['crm_db', 'retail_db']);
    assert.is(metrics.metrics.find((metric) => metric.name === 'revenue')?.datasources, undefined);
    const described = (await client.callTool({ name: 'describe_vdb', arguments: { vdb: 'shopfed', version: '1' } })).structuredContent as { semantic: { datasets: { name: string; fields: { name: string; datasources?: string[] }[] }[] } };
    const orders = described.semantic.datasets.find((dataset) => dataset.name === 'orders');
    assert.equal(orders?.fields.find((field) => field.name === 'region_manager')?.datasources, ['crm_db', 'retail_db']);
    // the clerk may not read regions.revenue_target: the metric over it is not theirs to see
    const cut = (await clerk.callTool({ name: 'list_metrics', arguments: { vdb: 'shopfed', version: '1' } })).structuredContent as { metrics: { name: string }[] };
    assert.equal(cut.metrics.map((metric) => metric.name).filter((name) => name === 'target_weighted' || name === 'managed_orders'), ['managed_orders']);
  } finally {
    await client.close();
    await clerk.close();
  }
});

test('the grants still cut: the clerk\'s query of the metric over a column outside them is refused, a field inside them answers', async ({ service }) => {
  const refused = await ask(service, { measures: ['target_weighted'] }, false, ADMIN_TOKEN);
  assert.equal([refused.status, refused.body.code], [403, 'forbidden'], JSON.stringify(refused.body));
  // the same field named in the query: refused alike over one datasource and federated
  for (const dimensions of [['regions.manager'], ['orders.status']]) {
    const named = await ask(service, { dimensions, measures: ['SUM(regions.revenue_target)'] }, false, ADMIN_TOKEN);
    assert.equal([named.status, named.body.code], [403, 'forbidden'], JSON.stringify(named.body));
  }
  const allowed = await ask(service, { dimensions: ['orders.region_manager'], measures: ['managed_orders'] }, false, ADMIN_TOKEN);
  assert.is(allowed.status, 200, JSON.stringify(allowed.body));
});

test.run();
