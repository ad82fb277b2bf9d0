// test-lane: postgres-server, mysql-server
/**
 * The semantic route over a model whose datasets live in PostgreSQL and MariaDB (docs/semantic-query.md): a
 * field of a MariaDB dataset is compiled in MariaDB's quoting for a query on MariaDB alone, and in
 * PostgreSQL's for a federated one. Answers compared with what the same rows give on one PostgreSQL.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { sha256Of } from '../../support/semantic-test-support.js';
import { releaseDatasource } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const ORDERS: [number, number, string, string][] = [[1, 1, '10.50', 'paid'], [2, 1, '5.25', 'shipped'], [3, 2, '7.00', 'paid'], [4, 3, '1.10', 'paid'], [5, 4, '2.00', 'cancelled']];
const CUSTOMERS: [number, string, string | null][] = [[1, 'Alice', 'North'], [2, 'alice', 'north'], [3, 'Bob', null], [4, 'Carol', 'South']];

const PG_SETUP = [
  'drop schema if exists fedsem cascade',
  'create schema fedsem',
  'create table fedsem.orders (id int primary key, customer_id int, total numeric(12,2), status text)',
  `insert into fedsem.orders values ${ORDERS.map(([id, customer, total, status]) => `(${id}, ${customer}, ${total}, '${status}')`).join(', ')}`,
];
const MY_SETUP = [
  'drop table if exists fedsem_customers',
  // a case-folding collation: 'North' and 'north' must stay two regions, as on PostgreSQL
  'create table fedsem_customers (id int primary key, `Name` varchar(40), region varchar(20) collate utf8mb4_general_ci)',
  `insert into fedsem_customers values ${CUSTOMERS.map(([id, name, region]) => `(${id}, '${name}', ${region === null ? 'null' : `'${region}'`})`).join(', ')}`,
];

/** A field of a dataset that is its column of the same name. */
const column = (name: string, type: string) => `          - { name: ${name}, expression: { dialects: [{ dialect: ANSI_SQL, expression: ${name} }] }, logical_type: ${type} }`;

/** VDB `namespace` over fedsem (PostgreSQL) and fedsem_customers (MariaDB), its semantic module the model. */
function semanticBundle(namespace: string, model: string, database: string): Record<string, string> {
  const manifest = `name: ${namespace}-semantic\nversion: 1.0.0\nnamespace: ${namespace}\ndocuments:\n  - path: ${namespace}.osi.yaml\n    mediaType: application/vnd.osi+yaml\n    sha256: ${sha256Of(model)}\n`;
  return {
    [`bundle/semantic/${namespace}/manifest.yaml`]: manifest,
    [`bundle/semantic/${namespace}/${namespace}.osi.yaml`]: model,
    [`bundle/vdbs/${namespace}.yaml`]: `name: ${namespace}
version: "1"
datasource: sales_db
schemas:
  - { name: fedsem, datasource: sales_db }
  - { name: ${database}, datasource: crm_db, include: [fedsem_customers] }
semantic:
  activationFailurePolicy: blockStartup
  module: { uri: semantic/${namespace}, name: ${namespace}-semantic, version: 1.0.0, sha256: ${sha256Of(manifest)} }
dataRoles:
  - name: analyst
    grants: [{ resource: fedsem, allow: [select] }, { resource: ${database}.fedsem_customers, allow: [select] }]
`,
  };
}

function bundle(database: string): Record<string, string> {
  const model = `namespace: fedsem
semantic_model:
  - name: fedsem
    datasets:
      - name: orders
        source: fedsem.orders
        primary_key: [id]
        fields:
${column('id', 'integer')}
${column('customer_id', 'integer')}
${column('total', 'decimal')}
${column('status', 'string')}
          - { name: region, expression: { dialects: [{ dialect: ANSI_SQL, expression: customers.region }] }, logical_type: string }
      - name: customers
        source: ${database}.fedsem_customers
        primary_key: [id]
        fields:
${column('id', 'integer')}
${column('region', 'string')}
          - { name: label, expression: { dialects: [{ dialect: ANSI_SQL, expression: "COALESCE(region, 'none')" }] }, logical_type: string }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
    metrics:
      - { name: revenue, expression: { dialects: [{ dialect: ANSI_SQL, expression: SUM(orders.total) }] } }
      - { name: order_count, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(orders.id) }] } }
      - { name: customer_count, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(customers.id) }] } }
      - { name: placed_revenue, expression: { dialects: [{ dialect: ANSI_SQL, expression: "SUM(CASE WHEN customers.region IS NULL THEN 0 ELSE orders.total END)" }] } }
      - { name: placed_orders, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(orders.region) }] } }
`;
  return semanticBundle('fedsem', model, database);
}

/**
 * A second VDB over the same relations whose MariaDB field reads `Name` in MariaDB's quoting: the model
 * activates, but does not compile in PostgreSQL's dialect, so nothing of it can be federated.
 */
function mariadbOnlyBundle(database: string): Record<string, string> {
  const model = `namespace: fedbad
semantic_model:
  - name: fedbad
    datasets:
      - name: orders
        source: fedsem.orders
        primary_key: [id]
        fields:
${column('id', 'integer')}
${column('customer_id', 'integer')}
${column('total', 'decimal')}
          - { name: region, expression: { dialects: [{ dialect: ANSI_SQL, expression: customers.region }] }, logical_type: string }
      - name: customers
        source: ${database}.fedsem_customers
        primary_key: [id]
        fields:
${column('id', 'integer')}
          - { name: name, expression: { dialects: [{ dialect: ANSI_SQL, expression: "\`Name\`" }] }, logical_type: string }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
    metrics:
      - { name: customer_count, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(customers.id) }] } }
      - { name: placed_orders, expression: { dialects: [{ dialect: ANSI_SQL, expression: COUNT(orders.region) }] } }
`;
  return semanticBundle('fedbad', model, database);
}

interface Answer { status: number; body: { rows?: Record<string, unknown>[]; code?: string; message?: string; sql?: string } }

async function ask(service: TestService, query: unknown, vdb = 'fedsem'): Promise<Answer> {
  const response = await service.request(`/api/v1/semantic/vdbs/${vdb}/versions/1/query`, {
    method: 'POST', body: JSON.stringify(query), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
  });
  return { status: response.status, body: await response.json() as Answer['body'] };
}

/** Revenue, order count by a customer's value, as one PostgreSQL answers (left join from orders, byte-wise order). */
function expectedBy(key: (customer: (typeof CUSTOMERS)[number] | undefined) => string | null): [string | null, string, number][] {
  const groups = new Map<string | null, { cents: number; count: number }>();
  for (const [, customerId, total] of ORDERS) {
    const group = key(CUSTOMERS.find(([id]) => id === customerId));
    const entry = groups.get(group) ?? { cents: 0, count: 0 };
    entry.cents += Math.round(Number(total) * 100);
    entry.count += 1;
    groups.set(group, entry);
  }
  const byteWise = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return [...groups.entries()].sort(([a], [b]) => byteWise(a, b)).map(([group, { cents, count }]) => [group, (cents / 100).toFixed(2), count]);
}

const test = suite<{ pg: Datasource; my: Datasource; service: TestService }>('semantic queries over a PostgreSQL and a MariaDB dataset');

if (!skippedHere(test, postgres) && !skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.pg = await postgres.open('sales_db');
    context.my = await mysql.open('crm_db');
    for (const statement of PG_SETUP) await context.pg.query(statement, []);
    for (const statement of MY_SETUP) await context.my.query(statement, []);
    const config = { ...demoConfig({ descriptors: './bundle' }), datasources: { sales_db: postgres.datasourceConfig, crm_db: mysql.datasourceConfig } };
    context.service = await startTestService({ config, files: { ...bundle(mysql.database), ...mariadbOnlyBundle(mysql.database) }, datasources: { sales_db: context.pg, crm_db: context.my } });
  });

  test.after(async ({ pg, my, service }) => {
    await service?.close();
    await releaseDatasource(service, pg, ['drop schema if exists fedsem cascade']);
    await releaseDatasource(service, my, ['drop table if exists fedsem_customers']);
  });

  test('revenue by a MariaDB dataset\'s field: one PostgreSQL\'s answer (North and north apart)', async ({ service }) => {
    const answer = await ask(service, { dimensions: ['customers.region'], measures: ['revenue', 'order_count'], orderBy: [{ field: 'customers.region' }] });
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.rows?.map((row) => [row['region'], Number(row['revenue']).toFixed(2), Number(row['order_count'])]), expectedBy((customer) => customer?.[2] ?? null));
  });

  test('a computed field of the MariaDB dataset (a function and a string constant) as the dimension', async ({ service }) => {
    const answer = await ask(service, { dimensions: ['customers.label'], measures: ['revenue', 'order_count'], orderBy: [{ field: 'customers.label' }] });
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.rows?.map((row) => [row['label'], Number(row['revenue']).toFixed(2), Number(row['order_count'])]), expectedBy((customer) => (customer ? customer[2] ?? 'none' : null)));
  });

  test('a query of the MariaDB dataset alone runs there, in its own dialect', async ({ service }) => {
    const answer = await ask(service, { dimensions: ['customers.label'], measures: ['customer_count'], orderBy: [{ field: 'customers.label' }] });
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.rows?.map((row) => Number(row['customer_count'])).reduce((a, b) => a + b, 0), CUSTOMERS.length);
  });

  test('a metric reading the datasets of both servers, by a dimension of either: one PostgreSQL\'s answer', async ({ service }) => {
    const byRegion = await ask(service, { dimensions: ['customers.region'], measures: ['placed_revenue'], orderBy: [{ field: 'customers.region' }] });
    assert.is(byRegion.status, 200, JSON.stringify(byRegion.body));
    assert.equal(byRegion.body.rows?.map((row) => [row['region'], Number(row['placed_revenue']).toFixed(2)]),
      expectedBy((customer) => customer?.[2] ?? null).map(([region, revenue]) => [region, region === null ? '0.00' : revenue]));
    const byStatus = await ask(service, { dimensions: ['orders.status'], measures: ['placed_revenue'], orderBy: [{ field: 'orders.status' }] });
    assert.is(byStatus.status, 200, JSON.stringify(byStatus.body));
    const placed = (status: string) => ORDERS.filter(([, customer, , of]) => of === status && CUSTOMERS.find(([id]) => id === customer)?.[2] != null)
      .reduce((sum, [, , total]) => sum + Math.round(Number(total) * 100), 0);
    assert.equal(byStatus.body.rows?.map((row) => [row['status'], Number(row['placed_revenue']).toFixed(2)]),
      ['cancelled', 'paid', 'shipped'].map((status) => [status, (placed(status) / 100).toFixed(2)]));
  });

  test('a field of the PostgreSQL dataset enriched from the MariaDB one: as the dimension (North and north apart) and inside a metric', async ({ service }) => {
    const answer = await ask(service, { dimensions: ['orders.region'], measures: ['revenue', 'order_count', 'placed_orders'], orderBy: [{ field: 'orders.region' }] });
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.rows?.map((row) => [row['region'], Number(row['revenue']).toFixed(2), Number(row['order_count']), Number(row['placed_orders'])]),
      expectedBy((customer) => customer?.[2] ?? null).map(([region, revenue, count]) => [region, revenue, count, region === null ? 0 : count]));
  });

  test('a query of the PostgreSQL dataset alone that uses neither runs there alone', async ({ service }) => {
    const response = await service.request('/api/v1/semantic/vdbs/fedsem/versions/1/query?explain=true', {
      method: 'POST', body: JSON.stringify({ dimensions: ['orders.status'], measures: ['revenue'] }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    const body = await response.json() as { sql?: string; sources?: unknown[] };
    assert.equal([response.status, typeof body.sql, body.sources], [200, 'string', undefined], JSON.stringify(body));
    const federated = await service.request('/api/v1/semantic/vdbs/fedsem/versions/1/query?explain=true', {
      method: 'POST', body: JSON.stringify({ dimensions: ['orders.status'], measures: ['placed_orders'] }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    const plan = await federated.json() as { sources?: { datasource: string }[] };
    assert.equal([federated.status, plan.sources?.map((source) => source.datasource).sort()], [200, ['crm_db', 'sales_db']], JSON.stringify(plan));
  });

  test('a model that does not compile in PostgreSQL\'s dialect stays active: its element over both is 400 federation_unsupported naming why', async ({ service }) => {
    const alone = await ask(service, { dimensions: ['customers.name'], measures: ['customer_count'], orderBy: [{ field: 'customers.name' }] }, 'fedbad');
    assert.is(alone.status, 200, JSON.stringify(alone.body));
    // on MariaDB alone, in its own dialect and collation
    assert.equal(alone.body.rows?.map((row) => Number(row['customer_count'])).reduce((a, b) => a + b, 0), CUSTOMERS.length);
    const refused = await ask(service, { measures: ['placed_orders'] }, 'fedbad');
    assert.equal([refused.status, refused.body.code], [400, 'federation_unsupported'], JSON.stringify(refused.body));
    assert.match(refused.body.message ?? '', /does not compile in PostgreSQL's dialect: .*Name/);
  });
}

test.run();
