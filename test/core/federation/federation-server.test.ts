/**
 * A VDB over a PostgreSQL and a MariaDB server answers statements over both through the real service, each
 * pushed statement run as the caller's database role on its source (docs/federation.md).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { samplesOf, sampleValue } from '../../support/prometheus-text.js';
import { releaseDatasource } from '../../support/synced-roles.js';
import { pgClient } from '../../support/sql-clients.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { cancelledWhenClientGoes } from './shop-databases.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const PG_SETUP = [
  'drop schema if exists fed_sales cascade',
  'create schema fed_sales',
  'create table fed_sales.orders (id int primary key, customer_id int, amount numeric(12,2), note text)',
  `insert into fed_sales.orders values (1, 1, 10.50, 'a'), (2, 1, 5.25, null), (3, 2, 7.00, 'b'), (4, 3, 1.10, 'c'), (5, null, 2.00, 'd'), (6, 2, 100.00, 'e')`,
  'create view fed_sales.whoami as select current_user::text as who',
  'create view fed_sales.slow as select 1 as x from pg_sleep(20)',
  // the planner's setting as the pushed statement's transaction has it
  `create view fed_sales.fraction as select current_setting('cursor_tuple_fraction') as f`,
  // not reading amount, whose type a test alters
  `create view fed_sales.order_fraction as select o.id, o.customer_id, current_setting('cursor_tuple_fraction') as f from fed_sales.orders o`,
  // more visits of customer 1 than federation.maxSourceRows
  'create table fed_sales.visits (customer_id int, at int)',
  'insert into fed_sales.visits select 1, n from generate_series(1, 7) as n',
];
const PG_TEARDOWN = ['drop schema if exists fed_sales cascade'];
// the customers' names in a collation that folds case: 'alice' = 'Alice' there, not in PostgreSQL
const MY_SETUP = [
  'drop view if exists fed_whoami',
  'drop table if exists fed_customers',
  'create table fed_customers (id int primary key, name varchar(40) collate utf8mb4_general_ci, region varchar(20))',
  `insert into fed_customers values (1, 'Alice', 'North'), (2, 'alice', 'South'), (3, 'Bob', null)`,
  'create sql security invoker view fed_whoami as select current_user() as who',
];
const MY_TEARDOWN = ['drop view if exists fed_whoami', 'drop table if exists fed_customers'];

const MAX_SOURCE_ROWS = 5;
/** A caller of another data role with the analyst's grants: its own database role on each source. */
const AUDITOR_TOKEN = 'test-auditor-token';

function files(database: string): Record<string, string> {
  const query = (name: string, sql: string, needed = '') => [`bundle/queries/${name}.yaml`, `---\ntype: sqlDirect\nvirtualDatabase: fed\n${needed}query: ${sql}\n`];
  return Object.fromEntries([
    ['bundle/vdbs/fed.yaml', `name: fed
version: "1"
datasource: sales_db
schemas:
  - { name: fed_sales, datasource: sales_db }
  - { name: ${database}, datasource: crm_db, include: [fed_customers, fed_whoami] }
dataRoles:
  - name: analyst
    grants: [{ resource: fed_sales, allow: [select] }, { resource: ${database}.fed_customers, allow: [select] }, { resource: ${database}.fed_whoami, allow: [select] }]
  - name: clerk
    grants: [{ resource: fed_sales, allow: [select] }]
  - name: auditor
    grants: [{ resource: fed_sales, allow: [select] }, { resource: ${database}.fed_customers, allow: [select] }, { resource: ${database}.fed_whoami, allow: [select] }]
`],
    query('fed_region', `select c.region, sum(o.amount) as revenue, count(*) as n from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id where o.id <= 5 group by c.region order by c.region`),
    query('fed_all', `select count(*) as n from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id`),
    query('fed_named', `select o.id, c.name from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id where c.name = {{ name }} order by o.id`, 'neededFields: [name]\n'),
    query('fed_whoami', `select w.who as pg_who, m.who as my_who from fed_sales.whoami w cross join ${database}.fed_whoami m`),
    query('fed_slow', `select s.x, c.id from fed_sales.slow s cross join ${database}.fed_customers c`),
    query('fed_amount', `select o.id, o.amount, c.name from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id where o.id = 1`),
    // the customer (one row) drives the slow view by a dependent join: a few keys, read without a cursor
    query('fed_slow_key', `select s.x from fed_sales.slow s join ${database}.fed_customers c on c.id = s.x where c.id = 1`),
    query('fed_fraction', `select f.f, c.id from fed_sales.fraction f cross join ${database}.fed_customers c where c.id = 1`),
    query('fed_grouped_fraction', `select c.region, o.f, sum(o.id) as ids from fed_sales.order_fraction o join ${database}.fed_customers c on c.id = o.customer_id where o.id <= 5 group by c.region, o.f order by c.region`),
    query('fed_visits', `select v.at from fed_sales.visits v join ${database}.fed_customers c on c.id = v.customer_id where c.id = 1`),
  ]);
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function perform(service: TestService, name: string, body: unknown, token = ADMIN_TOKEN, signal?: AbortSignal): Promise<Reply> {
  const response = await service.request(`/api/v1/query/perform/${name}`, {
    method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token, ...(signal && { signal }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function sourceRows(service: TestService, datasource: string): Promise<number> {
  const text = await (await service.request('/observe/metrics')).text();
  return sampleValue(samplesOf(text), 'vdb_federated_source_rows_total', { datasource });
}

// the config is kept: the last test starts the service again, as a VDB loaded again
const test = suite<{ pg: Datasource; my: Datasource; service: TestService; config: Record<string, unknown> }>('federation: PostgreSQL + MariaDB through the service');

if (!skippedHere(test, postgres) && !skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.pg = await postgres.open('sales_db');
    context.my = await mysql.open('crm_db');
    for (const statement of PG_SETUP) await context.pg.query(statement, []);
    for (const statement of MY_SETUP) await context.my.query(statement, []);
    const demo = demoConfig({ descriptors: './bundle' });
    const { tokens } = demo['auth'] as { tokens: unknown[] };
    const config = {
      ...demo,
      auth: { ...(demo['auth'] as object), tokens: [...tokens, { token: AUDITOR_TOKEN, subject: 'auditor', roles: ['auditor'] }] },
      datasources: { sales_db: postgres.datasourceConfig, crm_db: mysql.datasourceConfig },
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 15_000 },
      // the engine's plan, caps and reads (shipping, which these small reads would take, has federation-shipping.test.ts)
      federation: { maxSourceRows: MAX_SOURCE_ROWS, shipMaxRows: 0 },
      sql: { enabled: true, port: 0 },
      capabilities: [{ name: 'answer' }],
    };
    context.config = config;
    context.service = await startTestService({ config, files: files(mysql.database), datasources: { sales_db: context.pg, crm_db: context.my } });
  });

  test.after(async ({ pg, my, service }) => {
    await service?.close();
    await releaseDatasource(service, pg, PG_TEARDOWN);
    await releaseDatasource(service, my, MY_TEARDOWN);
  });

  test('a join and aggregation over both answers what PostgreSQL would: numeric sums, bigint counts, NULL region last', async ({ service }) => {
    const reply = await perform(service, 'fed_region', {}, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], [
      { region: 'North', revenue: '15.75', n: '2' },
      { region: 'South', revenue: '7', n: '1' },
      { region: null, revenue: '1.1', n: '1' },
    ]);
    assert.equal(reply.body['columns'], [
      { name: 'region', logicalType: 'string' }, { name: 'revenue', logicalType: 'decimal' }, { name: 'n', logicalType: 'bigint' },
    ]);
  });

  test('each pushed statement runs as the caller\'s database role on its source', async ({ service }) => {
    const reply = await perform(service, 'fed_whoami', {}, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    const [row] = reply.body['rows'] as { pg_who: string; my_who: string }[];
    assert.is(row?.pg_who, 'vdb_fed_v1_analyst');
    assert.match(String(row?.my_who), /^vdb_fed_v1_analyst@/);
  });

  test('a data role without the MariaDB relation is refused as a single-source statement would be: 403, nothing runs', async ({ service }) => {
    const reply = await perform(service, 'fed_region', {}, ADMIN_TOKEN);
    assert.equal([reply.status, reply.body['code']], [403, 'forbidden'], JSON.stringify(reply.body));
  });

  test('text compares byte-wise on a case-folding MariaDB, and the dependent join reads only the matching orders', async ({ service }) => {
    const before = await sourceRows(service, 'sales_db');
    const reply = await perform(service, 'fed_named', { name: 'alice' }, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], [{ id: 3, name: 'alice' }, { id: 6, name: 'alice' }]);
    assert.is(await sourceRows(service, 'sales_db') - before, 2, 'rows read from PostgreSQL: the two orders of customer 2');
  });

  test('?explain=true answers the plan without running it: each source\'s statement in its dialect, values elided, the dependent one named', async ({ service }) => {
    const before = await sourceRows(service, 'crm_db');
    const response = await service.request('/api/v1/query/perform/fed_named?explain=true', {
      method: 'POST', body: JSON.stringify({ name: 'alice' }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    const text = await response.text();
    assert.is(response.status, 200, text);
    assert.not.match(text, 'alice', 'bound values are elided');
    const plan = JSON.parse(text) as { sources: { datasource: string; sql: string; dependentOn?: string }[]; engine: { sql: string } };
    assert.equal(plan.sources, [
      { datasource: 'sales_db', sql: 'SELECT "id", "customer_id" FROM "fed_sales"."orders" WHERE "customer_id" = ANY(?)', dependentOn: 'crm_db' },
      // the column's own (folding) comparison, which an index serves, narrows; the bytes decide
      { datasource: 'crm_db', sql: `SELECT \`id\`, \`name\` FROM \`${mysql.database}\`.\`fed_customers\` WHERE \`name\` = ? AND CAST(\`name\` AS BINARY) = ?` },
    ]);
    assert.match(plan.engine.sql, /^SELECT /);
    assert.is(await sourceRows(service, 'crm_db'), before, 'nothing ran');
  });

  test('a pushed statement over federation.maxSourceRows answers 422 result_too_large naming the datasource', async ({ service }) => {
    const reply = await perform(service, 'fed_all', {}, ANALYST_TOKEN);
    assert.equal([reply.status, reply.body['code'], reply.body['details']], [422, 'result_too_large', { datasource: 'sales_db', limitRows: MAX_SOURCE_ROWS }], JSON.stringify(reply.body));
  });

  test('the SQL door answers a statement over both with a bound parameter, and EXPLAIN answers the plan without running it', async ({ service }) => {
    const client = pgClient({ port: (service.sqlAddress as { port: number }).port, database: 'fed@1' }, ANALYST_TOKEN);
    await client.connect();
    try {
      const statement = `select o.id, c.region from fed_sales.orders o join ${mysql.database}.fed_customers c on c.id = o.customer_id where o.id < $1 order by o.id`;
      const result = await client.query(statement, [3]);
      assert.equal(result.rows, [{ id: 1, region: 'North' }, { id: 2, region: 'North' }]);
      const explained = await client.query(`explain ${statement.replace('$1', '3')}`);
      const plan = JSON.parse(String(explained.rows[0]?.['QUERY PLAN'])) as { sources: { datasource: string; sql: string }[]; engine: { sql: string } };
      assert.equal(plan.sources.map((source) => source.datasource).sort(), ['crm_db', 'sales_db']);
      const pushed = plan.sources.find((source) => source.datasource === 'sales_db')?.sql ?? '';
      assert.match(pushed, /"id" < \?/, 'the predicate on orders is pushed, its value elided');
      assert.not.match(pushed, /note|amount/, 'only the columns used are read');
    } finally {
      await client.end();
    }
  });

  test('a task query over both answers as an observation; a construct the plan cannot evaluate is a denied observation naming it', async ({ service }) => {
    const tasks = '/api/v1/capabilities/answer/vdbs/fed/versions/1/tasks';
    const post = async (goal: string) => {
      const response = await service.request(tasks, { method: 'POST', body: JSON.stringify({ goal }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN });
      const snapshot = (await response.json()) as { state: string; artifacts: { kind: string; content: { data: string } }[] };
      return snapshot.state + snapshot.artifacts.map((one) => Buffer.from(one.content.data, 'base64').toString('utf8')).join('\n');
    };
    const answered = await post(`select c.name from fed_sales.orders o join ${mysql.database}.fed_customers c on c.id = o.customer_id where o.id = 4`);
    assert.match(answered, /^completed/, answered);
    assert.match(answered, 'Bob');
    const refused = await post(`select c.name from fed_sales.orders o join ${mysql.database}.fed_customers c on c.id = o.customer_id where c.name similar to 'a%'`);
    assert.match(refused, 'federation_unsupported', refused);
    assert.match(refused, 'SIMILAR TO is not supported');
  });

  test('a client that goes away cancels the slow pushed statement on its server', async ({ pg, service }) => {
    // the pushed statement is read by a cursor: the server shows its FETCH, waiting in pg_sleep
    await cancelledWhenClientGoes(pg, service, 'fed_slow', '', 'the pushed statement runs');
  });
  test('a cached plan answers each request\'s values: the same text bound to others reads and answers their rows', async ({ service }) => {
    const names = async (name: string) => {
      const reply = await perform(service, 'fed_named', { name }, ANALYST_TOKEN);
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      return reply.body['rows'];
    };
    assert.equal(await names('alice'), [{ id: 3, name: 'alice' }, { id: 6, name: 'alice' }]);
    assert.equal(await names('Bob'), [{ id: 4, name: 'Bob' }]);
    assert.equal(await names('nobody'), []);
    assert.equal(await names('alice'), [{ id: 3, name: 'alice' }, { id: 6, name: 'alice' }]);
    const client = pgClient({ port: (service.sqlAddress as { port: number }).port, database: 'fed@1' }, ANALYST_TOKEN);
    await client.connect();
    try {
      const statement = `select o.id, c.region from fed_sales.orders o join ${mysql.database}.fed_customers c on c.id = o.customer_id where o.id < $1 order by o.id`;
      const ids = async (value: unknown) => (await client.query({ text: statement, values: [value], rowMode: 'array' })).rows.map((row: unknown[]) => row[0]);
      assert.equal(await ids(3), [1, 2]);
      assert.equal(await ids(5), [1, 2, 3, 4]);
      // a value sent as text: another shape of values, another plan
      assert.equal(await ids('4'), [1, 2, 3]);
      assert.equal(await ids(2), [1]);
    } finally {
      await client.end();
    }
  });

  test('a cached plan runs as each caller: two data roles, each pushed statement under the caller\'s own database role', async ({ service }) => {
    const whoami = async (token: string) => {
      const reply = await perform(service, 'fed_whoami', {}, token);
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      return (reply.body['rows'] as { pg_who: string; my_who: string }[])[0];
    };
    for (const [token, role] of [[ANALYST_TOKEN, 'analyst'], [AUDITOR_TOKEN, 'auditor'], [ANALYST_TOKEN, 'analyst']] as const) {
      const row = await whoami(token);
      assert.is(row?.pg_who, `vdb_fed_v1_${role}`);
      assert.match(String(row?.my_who), new RegExp(`^vdb_fed_v1_${role}@`));
    }
    // a data role refused the MariaDB relation is refused before the plan, cached or not
    const refused = await perform(service, 'fed_region', {}, ADMIN_TOKEN);
    assert.is(refused.status, 403, JSON.stringify(refused.body));
  });

  test('a pushed statement read by a cursor is planned for all its rows (cursor_tuple_fraction 1), not for its first tenth', async ({ service }) => {
    const reply = await perform(service, 'fed_fraction', {}, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], [{ f: '1', id: 1 }]);
  });

  test('an aggregation pushed to its source is read by one statement (which PostgreSQL may run in parallel), not a cursor: its groups are few', async ({ service }) => {
    const reply = await perform(service, 'fed_grouped_fraction', {}, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    const fractions = new Set((reply.body['rows'] as Record<string, unknown>[]).map((row) => row['f']));
    assert.equal([...fractions], ['0.1'], JSON.stringify(reply.body['rows']));
  });

  test('a dependent read without a cursor still stops at federation.maxSourceRows: 422 naming the datasource', async ({ service }) => {
    const reply = await perform(service, 'fed_visits', {}, ANALYST_TOKEN);
    assert.equal([reply.status, reply.body['code'], reply.body['details']], [422, 'result_too_large', { datasource: 'sales_db', limitRows: MAX_SOURCE_ROWS }], JSON.stringify(reply.body));
  });

  test('a client that goes away cancels a dependent read without a cursor on its server', async ({ pg, service }) => {
    await cancelledWhenClientGoes(pg, service, 'fed_slow_key', " and query like '%ANY%'", 'the dependent statement runs, as one query');
  });

  // last: it starts the service again
  test('a VDB loaded again is planned again: a column whose scale changed answers at its new scale', async (context) => {
    const amount = async () => {
      const reply = await perform(context.service, 'fed_amount', {}, ANALYST_TOKEN);
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      return (reply.body['rows'] as { amount: string }[])[0]?.amount;
    };
    assert.is(await amount(), '10.5');
    await context.pg.query('alter table fed_sales.orders alter column amount type numeric(12,3)', []);
    await context.pg.query('update fed_sales.orders set amount = 10.125 where id = 1', []);
    await context.service.close();
    context.service = await startTestService({ config: context.config, files: files(mysql.database), datasources: { sales_db: context.pg, crm_db: context.my } });
    assert.is(await amount(), '10.125', 'the plan of the VDB loaded before held numeric(12,2)');
  });
}

test.run();
