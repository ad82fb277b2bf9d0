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
import { ANALYST_TOKEN, demoConfig, demoDescriptors, startTestService, type TestService } from '../../support/test-service.js';
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
`,
  };
}

interface Answer {
  status: number;
  body: { rows?: Record<string, unknown>[]; columns?: { name: string; logicalType: string }[]; code?: string; message?: string; sources?: { datasource: string; sql: string }[]; engine?: { sql: string }; sql?: string };
}

async function ask(service: TestService, query: unknown, explain = false): Promise<Answer> {
  const response = await service.request(`/api/v1/semantic/vdbs/shopfed/versions/1/query${explain ? '?explain=true' : ''}`, {
    method: 'POST', body: JSON.stringify(query), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
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
    config: demoConfig({ descriptors: './bundle' }),
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

test('a query the plan cannot evaluate with PostgreSQL\'s semantics (a month grain) is 400 federation_unsupported naming it; over one datasource it answers', async ({ service }) => {
  const month = { field: 'orders.ordered_at', grain: 'month', alias: 'month' };
  const refused = await ask(service, { dimensions: ['regions.manager', month], measures: ['revenue'] });
  assert.equal([refused.status, refused.body.code], [400, 'federation_unsupported'], JSON.stringify(refused.body));
  assert.match(refused.body.message ?? '', /date_trunc/i);
  const single = await ask(service, { dimensions: ['customers.region', month], measures: ['revenue'] });
  assert.is(single.status, 200, JSON.stringify(single.body));
});

test.run();
