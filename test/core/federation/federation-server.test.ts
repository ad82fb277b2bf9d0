/**
 * A VDB over a PostgreSQL and a MariaDB server answers statements over both through the real service, each
 * pushed statement run as the caller's database role on its source (docs/federation.md).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { samplesOf, sampleValue } from '../../support/prometheus-text.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { pgClient } from '../../support/sql-clients.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const PG_SETUP = [
  'drop schema if exists fed_sales cascade',
  'create schema fed_sales',
  'create table fed_sales.orders (id int primary key, customer_id int, amount numeric(12,2), note text)',
  `insert into fed_sales.orders values (1, 1, 10.50, 'a'), (2, 1, 5.25, null), (3, 2, 7.00, 'b'), (4, 3, 1.10, 'c'), (5, null, 2.00, 'd'), (6, 2, 100.00, 'e')`,
  'create view fed_sales.whoami as select current_user::text as who',
  'create view fed_sales.slow as select 1 as x from pg_sleep(20)',
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
`],
    query('fed_region', `select c.region, sum(o.amount) as revenue, count(*) as n from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id where o.id <= 5 group by c.region order by c.region`),
    query('fed_all', `select count(*) as n from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id`),
    query('fed_named', `select o.id, c.name from fed_sales.orders o join ${database}.fed_customers c on c.id = o.customer_id where c.name = {{ name }} order by o.id`, 'neededFields: [name]\n'),
    query('fed_whoami', `select w.who as pg_who, m.who as my_who from fed_sales.whoami w cross join ${database}.fed_whoami m`),
    query('fed_slow', `select s.x, c.id from fed_sales.slow s cross join ${database}.fed_customers c`),
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

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

const test = suite<{ pg: Datasource; my: Datasource; service: TestService }>('federation: PostgreSQL + MariaDB through the service');

if (!skippedHere(test, postgres) && !skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.pg = await postgres.open('sales_db');
    context.my = await mysql.open('crm_db');
    for (const statement of PG_SETUP) await context.pg.query(statement, []);
    for (const statement of MY_SETUP) await context.my.query(statement, []);
    const config = {
      ...demoConfig({ descriptors: './bundle' }),
      datasources: { sales_db: postgres.datasourceConfig, crm_db: mysql.datasourceConfig },
      server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 15_000 },
      federation: { maxSourceRows: MAX_SOURCE_ROWS },
      sql: { enabled: true, port: 0 },
      capabilities: [{ name: 'answer' }],
    };
    context.service = await startTestService({ config, files: files(mysql.database), datasources: { sales_db: context.pg, crm_db: context.my } });
  });

  test.after(async ({ pg, my, service }) => {
    await service?.close();
    if (pg) {
      await dropSyncedRoles(service, pg);
      for (const statement of PG_TEARDOWN) await pg.query(statement, []);
      await pg.close();
    }
    if (my) {
      await dropSyncedRoles(service, my);
      for (const statement of MY_TEARDOWN) await my.query(statement, []);
      await my.close();
    }
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
    const running = async () => Number((await pg.query(
      // the pushed statement is read by a cursor: the server shows its FETCH, waiting in pg_sleep
      `select count(*)::int as n from pg_stat_activity where state = 'active' and wait_event = 'PgSleep' and pid <> pg_backend_pid()`, [],
    )).rows[0]?.['n']);
    const client = new AbortController();
    const request = perform(service, 'fed_slow', {}, ANALYST_TOKEN, client.signal).then(() => 'answered', () => 'aborted');
    let count = 0;
    for (let tries = 0; count === 0 && tries < 50; tries += 1) {
      await pause(100);
      count = await running();
    }
    assert.is(count, 1, 'the pushed statement runs');
    client.abort();
    assert.is(await request, 'aborted');
    for (let tries = 0; count > 0 && tries < 30; tries += 1) {
      await pause(100);
      count = await running();
    }
    assert.is(count, 0, 'no pushed statement still runs on PostgreSQL');
  });
}

test.run();
