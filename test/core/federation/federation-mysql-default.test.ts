// test-lane: postgres-server, mysql-server
/**
 * A VDB whose default datasource is MariaDB, with a second datasource on PostgreSQL: a statement over both is
 * PostgreSQL's dialect whatever the default (docs/federation.md#doors), so `"..."` names a column and `::`
 * casts, through the HTTP query route, the Task API and the SQL door; a statement over MariaDB alone keeps
 * MariaDB's dialect (backticks, `"..."` a string).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { releaseDatasource } from '../../support/synced-roles.js';
import { pgClient } from '../../support/sql-clients.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const PG_SETUP = [
  'drop schema if exists fedmy_sales cascade',
  'create schema fedmy_sales',
  'create table fedmy_sales.orders (id int primary key, customer_id int, amount numeric(12,2))',
  'insert into fedmy_sales.orders values (1, 1, 10.50), (2, 1, 5.25), (3, 2, 7.00), (4, 3, 1.10)',
];
const PG_TEARDOWN = ['drop schema if exists fedmy_sales cascade'];
const MY_SETUP = [
  'drop table if exists fedmy_customers',
  // "Name" in capitals: PostgreSQL's dialect reaches it only quoted
  'create table fedmy_customers (id int primary key, `Name` varchar(40) collate utf8mb4_general_ci, region varchar(20))',
  `insert into fedmy_customers values (1, 'Alice', 'North'), (2, 'alice', 'South'), (3, 'Bob', null)`,
];
const MY_TEARDOWN = ['drop table if exists fedmy_customers'];

/** Over both: a double-quoted column, a `::` cast, a string constant (`'...'`, never `"..."` in PostgreSQL). */
function spanning(database: string): string {
  return `select o.id, c."Name" as name, (o.amount * 2)::text as doubled, 'x' || c.region as tag from fedmy_sales.orders o `
    + `join ${database}.fedmy_customers c on c.id = o.customer_id where c."Name" <> 'Bob' order by o.id`;
}
const SPANNING_ROWS = [
  { id: 1, name: 'Alice', doubled: '21.00', tag: 'xNorth' },
  { id: 2, name: 'Alice', doubled: '10.50', tag: 'xNorth' },
  { id: 3, name: 'alice', doubled: '14.00', tag: 'xSouth' },
];

function files(database: string): Record<string, string> {
  const query = (name: string, sql: string) => [`bundle/queries/${name}.yaml`, `---\ntype: sqlDirect\nvirtualDatabase: fedmy\nquery: >-\n  ${sql}\n`];
  return Object.fromEntries([
    ['bundle/vdbs/fedmy.yaml', `name: fedmy
version: "1"
datasource: crm_db
schemas:
  - { name: ${database}, datasource: crm_db, include: [fedmy_customers] }
  - { name: fedmy_sales, datasource: sales_db }
dataRoles:
  - name: analyst
    grants: [{ resource: fedmy_sales, allow: [select] }, { resource: ${database}.fedmy_customers, allow: [select] }]
`],
    query('fedmy_spanning', spanning(database)),
    // MariaDB's own dialect on MariaDB alone: backticks, and "..." a string there
    query('fedmy_local', `select \`Name\` as name, concat("r:", region) as tag from \`${database}\`.fedmy_customers where id = 1`),
  ]);
}

const test = suite<{ pg: Datasource; my: Datasource; service: TestService }>('federation: a VDB whose default datasource is MariaDB');

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
      sql: { enabled: true, port: 0 },
      capabilities: [{ name: 'answer' }],
    };
    context.service = await startTestService({ config, files: files(mysql.database), datasources: { sales_db: context.pg, crm_db: context.my } });
  });

  test.after(async ({ pg, my, service }) => {
    await service?.close();
    await releaseDatasource(service, pg, PG_TEARDOWN);
    await releaseDatasource(service, my, MY_TEARDOWN);
  });

  const perform = async (service: TestService, name: string) => {
    const response = await service.request(`/api/v1/query/perform/${name}`, {
      method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test('the HTTP query route: a definition over both loads and answers in PostgreSQL\'s dialect', async ({ service }) => {
    const reply = await perform(service, 'fedmy_spanning');
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], SPANNING_ROWS);
  });

  test('a definition over MariaDB alone keeps MariaDB\'s dialect on the same VDB', async ({ service }) => {
    const reply = await perform(service, 'fedmy_local');
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(reply.body['rows'], [{ name: 'Alice', tag: 'r:North' }]);
  });

  test('the Task API: a query over both in PostgreSQL\'s dialect answers as an observation', async ({ service }) => {
    const response = await service.request('/api/v1/capabilities/answer/vdbs/fedmy/versions/1/tasks', {
      method: 'POST', body: JSON.stringify({ goal: spanning(mysql.database) }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    const snapshot = (await response.json()) as { state: string; artifacts: { kind: string; mediaType?: string; content: { data: string } }[] };
    const text = snapshot.artifacts.map((one) => Buffer.from(one.content.data, 'base64').toString('utf8')).join('\n');
    assert.is(snapshot.state, 'completed', text);
    for (const row of SPANNING_ROWS) assert.match(text, `${row.doubled}`);
    assert.match(text, 'xSouth');
  });

  test('the SQL door: a statement over both with a bound parameter, in PostgreSQL\'s dialect', async ({ service }) => {
    const client = pgClient({ port: (service.sqlAddress as { port: number }).port, database: 'fedmy@1' }, ANALYST_TOKEN);
    await client.connect();
    try {
      const result = await client.query(spanning(mysql.database).replace(`'Bob'`, '$1'), ['Bob']);
      assert.equal(result.rows, SPANNING_ROWS);
    } finally {
      await client.end();
    }
  });
}

test.run();
