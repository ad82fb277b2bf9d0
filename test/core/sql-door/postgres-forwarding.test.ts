/**
 * The SQL front door over PostgreSQL forwards each statement the analyzer allowed to a connection set to
 * the caller's role, read-only mode and time limit, and passes the backend's answer on as it is
 * (docs/sql.md#forwarding-a-vdb-on-postgresql). Through real clients: values in PostgreSQL's own forms, a refusal by the database
 * itself, the result budget, a CancelRequest, parameters with node-postgres and JDBC.
 */
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { cancelUntilEnded, jdbc, jdbcMissing, pgClient, type DoorTarget } from '../../support/sql-clients.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];
const S = 'sql_door_forward';
/** The result budget: the three customers fit, the 500 lines do not. */
const MAX_RESULT_BYTES = 4_096;

const test = suite<{ service: TestService; raw: Datasource; target: DoorTarget }>('postgres: the SQL front door forwards statements to PostgreSQL');

const vdb = `
name: fwd
version: "1"
datasource: retail_db
schemas:
  - { name: ${S} }
dataRoles:
  - name: clerk
    grants: [{ resource: ${S}, allow: [select, insert, update, delete] }]
  - name: analyst
    grants:
      - { resource: ${S}.customers, allow: [select] }
      - { resource: ${S}.lines, allow: [select] }
`;

/** The service's datasource over the test database, as the login. */
async function openRaw(connectionString: string): Promise<Datasource> {
  return runtimeOver(await new PostgresDialect('postgres').open({
    name: 'retail_db', adapter: 'postgres', connection: { connectionString }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  }));
}

/** Stops the service, then drops its synced roles and the schema. */
async function tearDown({ service, raw }: { service: TestService; raw: Datasource }): Promise<void> {
  await service?.close();
  if (raw) {
    await dropSyncedRoles(service, raw);
    await raw.query(`drop schema if exists ${S} cascade`, []);
    await raw.close();
  }
}

test.before(async (context) => {
  if (url === undefined) return;
  context.raw = await openRaw(url);
  for (const statement of [
    `drop schema if exists ${S} cascade`,
    `create schema ${S}`,
    `create table ${S}.customers (id integer primary key, name text not null, balance numeric(10, 2) not null)`,
    `insert into ${S}.customers values (1, 'Ada', 10.50), (2, 'Ben', 7.00), (3, 'Chloe', 0.25)`,
    `create table ${S}.lines (id integer primary key, body text not null)`,
    `insert into ${S}.lines select n, repeat('x', 40) from generate_series(1, 500) as n`,
    // one row larger than the budget, and than a socket read
    `insert into ${S}.lines values (1000, repeat('y', 300000))`,
  ]) await context.raw.query(statement, []);
  context.service = await startTestService({
    config: demoConfig({ descriptors: './bundle', server: { host: '127.0.0.1', port: 0, maxResultBytes: MAX_RESULT_BYTES }, sql: { enabled: true, port: 0 } }),
    files: { 'bundle/vdbs/fwd.yaml': vdb },
    datasources: { retail_db: context.raw },
  });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'fwd@1' };
});

test.after(tearDown);

async function withClient<T>(target: DoorTarget, token: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = pgClient(target, token);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function failure(running: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await running;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('the statement did not fail');
}

const run = url === undefined ? test.skip : test;

run('node-postgres: a parameterised query answers PostgreSQL\'s own types and text forms, as the caller\'s role', async ({ target }) => {
  await withClient(target, ANALYST_TOKEN, async (client) => {
    const found = await client.query(`select id, name, balance from ${S}.customers where id = $1`, [2]);
    assert.equal(found.rows, [{ id: 2, name: 'Ben', balance: '7.00' }]);
    // int4, text and numeric, as PostgreSQL describes them
    assert.equal(found.fields.map((field) => field.dataTypeID), [23, 25, 1700]);
    const session = await client.query(`select current_user as role from ${S}.customers where id = $1`, [1]);
    assert.equal(session.rows, [{ role: 'vdb_fwd_v1_analyst' }]);
  });
});

run('a relation the database refuses the role is 42501 from PostgreSQL itself, though the analyzer allowed it, also once prepared', async ({ target, raw }) => {
  // run once while granted: the statement is now prepared on the backend connection, which checks privileges at every run
  await withClient(target, ANALYST_TOKEN, async (client) => {
    assert.equal((await client.query(`select id from ${S}.lines where id = $1`, [1])).rows, [{ id: 1 }]);
  });
  await raw.query(`revoke select on ${S}.lines from vdb_fwd_v1_analyst`, []);
  try {
    await withClient(target, ANALYST_TOKEN, async (client) => {
      const refused = await failure(client.query(`select id from ${S}.lines where id = $1`, [1]));
      assert.is(refused.code, '42501');
      // the connection serves on
      assert.equal((await client.query(`select name from ${S}.customers where id = $1`, [3])).rows, [{ name: 'Chloe' }]);
    });
  } finally {
    await raw.query(`grant select on ${S}.lines to vdb_fwd_v1_analyst`, []);
  }
});

run('writes: the clerk\'s insert is refused as not read-only (25006) while sql.allowWrites is off', async ({ target, raw }) => {
  await withClient(target, ADMIN_TOKEN, async (client) => {
    const refused = await failure(client.query(`insert into ${S}.customers values ($1, 'Dan', 1)`, [4]));
    assert.is(refused.code, '25006');
    // a read that locks rows is refused too, before anything is sent
    const locking = await failure(client.query(`select id from ${S}.customers where id = $1 for update`, [1]));
    assert.is(locking.code, '25006');
  });
  assert.equal((await raw.query(`select count(*)::int as n from ${S}.customers`, [])).rows, [{ n: 3 }]);
});

run(`rows past server.maxResultBytes (${MAX_RESULT_BYTES}) are cut and answered 54000, in both protocols; the connection serves on`, async ({ target }) => {
  await withClient(target, ANALYST_TOKEN, async (client) => {
    assert.is((await failure(client.query(`select id, body from ${S}.lines where id > $1`, [0]))).code, '54000');
    assert.is((await failure(client.query(`select id, body from ${S}.lines`))).code, '54000');
    // a single row over the budget is dropped as it arrives, read after read
    assert.is((await failure(client.query(`select body from ${S}.lines where id = $1`, [1000]))).code, '54000');
    assert.equal((await client.query(`select id, body from ${S}.lines where id <= $1 order by id`, [2])).rows.map((row) => row.id), [1, 2]);
  });
});

run(`a cursor reads its rows from a PostgreSQL cursor as they are fetched, as the caller's role: 500 rows over the budget (${MAX_RESULT_BYTES}) in FETCHes within it`, async ({ target, raw }) => {
  const serverCursors = async () => (await raw.query(
    "select count(*)::int as n from pg_catalog.pg_stat_activity where query like 'fetch forward % from vdb_cursor' and state = 'idle in transaction'", [])).rows[0]?.['n'];
  await withClient(target, ANALYST_TOKEN, async (client) => {
    await client.query('begin read only');
    await client.query(`declare lines cursor for select id, body, current_user as role from ${S}.lines where id <= $1 order by id`, [500]);
    const ids: number[] = [];
    for (;;) {
      const batch = await client.query('fetch forward 40 from lines');
      if (batch.rows.length === 0) break;
      ids.push(...batch.rows.map((row: { id: number; role: string }) => (assert.is(row.role, 'vdb_fwd_v1_analyst'), row.id)));
      // the rows wait on the server, in a transaction of the cursor's own
      assert.is(await serverCursors(), 1);
    }
    assert.equal(ids, Array.from({ length: 500 }, (_, index) => index + 1));
    await client.query('close lines');
    assert.is(await serverCursors(), 0, 'CLOSE ends the cursor on the server and gives its connection back');
    // a FETCH over the budget is 54000, and its cursor is gone
    await client.query(`declare all_lines cursor for select id, body from ${S}.lines order by id`);
    assert.is((await failure(client.query('fetch all from all_lines'))).code, '54000');
    await client.query('rollback');
    await client.query('begin');
    await client.query(`declare big cursor for select body from ${S}.lines where id = $1`, [1000]);
    assert.is((await failure(client.query('fetch next from big'))).code, '54000', 'a row over the budget');
    await client.query('rollback');
  });
  assert.is(await serverCursors(), 0);
});

run(`COPY … TO STDOUT streams its rows from a PostgreSQL cursor in batches: 500 rows over the budget (${MAX_RESULT_BYTES}); a row over it is 54000`, async ({ target }) => {
  await withClient(target, ANALYST_TOKEN, async (client) => {
    const copied: Buffer[] = [];
    const connection = (client as unknown as { connection: { on(event: string, listener: (message: { chunk?: Buffer }) => void): void } }).connection;
    connection.on('copyData', (message) => copied.push(message.chunk as Buffer));
    const result = await client.query(`copy (select id from ${S}.lines where id <= 500 order by id) to stdout`);
    assert.is(result.command, 'COPY');
    assert.is(result.rowCount, 500);
    assert.is(Buffer.concat(copied).toString(), Array.from({ length: 500 }, (_, index) => `${index + 1}\n`).join(''));
    assert.is((await failure(client.query(`copy (select body from ${S}.lines where id = 1000) to stdout`))).code, '54000');
    assert.is((await failure(client.query(`copy ${S}.customers from stdin`))).code, '0A000');
    assert.equal((await client.query(`select count(*)::int as n from ${S}.customers`)).rows, [{ n: 3 }], 'the connection serves on');
  });
});

run('a CancelRequest cancels the statement on PostgreSQL (57014) and the connection serves the next one', async ({ target }) => {
  await withClient(target, ANALYST_TOKEN, async (client) => {
    const outcome = await cancelUntilEnded(target, ANALYST_TOKEN, client, `select count(*) from ${S}.lines a, ${S}.lines b, ${S}.lines c, ${S}.lines d where a.id > $1`, [0]);
    assert.is((outcome as { code?: string }).code, '57014');
    assert.match((outcome as Error).message, /user request/);
    assert.equal((await client.query(`select count(*)::int as n from ${S}.customers`)).rows, [{ n: 3 }]);
  });
});

const missingJdbc = jdbcMissing();
(url === undefined || missingJdbc ? test.skip : test)(`JDBC: a PreparedStatement past prepareThreshold (binary values) and a refusal${missingJdbc ? ` (${missingJdbc})` : ''}`, async ({ target }) => {
  const lines = await jdbc(target, ANALYST_TOKEN, [
    `prepared:select id, name, balance from ${S}.customers where id = ?|1`,
    `prepared-text:select id from ${S}.customers where name = ?|Chloe`,
    `query:select id from ${S}.orders`,
  ]);
  assert.is(lines[0], '1|Ada|10.50');
  assert.is(lines[1], '3');
  assert.match(lines[2] ?? '', /^error 42P01 /);
});

test.run();

const writes = suite<{ service: TestService; raw: Datasource; target: DoorTarget }>('postgres: forwarded writes with sql.allowWrites');

writes.before(async (context) => {
  if (url === undefined) return;
  context.raw = await openRaw(url);
  for (const statement of [
    `drop schema if exists ${S} cascade`,
    `create schema ${S}`,
    `create table ${S}.customers (id integer primary key, name text not null, balance numeric(10, 2) not null)`,
    `create table ${S}.lines (id integer primary key, body text not null)`,
    `insert into ${S}.lines values (1, repeat('y', 300000))`,
  ]) await context.raw.query(statement, []);
  context.service = await startTestService({
    config: demoConfig({ descriptors: './bundle', sql: { enabled: true, port: 0, allowWrites: true } }),
    files: { 'bundle/vdbs/fwd.yaml': vdb },
    datasources: { retail_db: context.raw },
  });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'fwd@1' };
});

writes.after(tearDown);

(url === undefined ? writes.skip : writes)('the clerk\'s insert runs with its values bound (INSERT 0 1); the analyst\'s is refused 42501', async ({ target, raw }) => {
  await withClient(target, ADMIN_TOKEN, async (client) => {
    const inserted = await client.query(`insert into ${S}.customers values ($1, $2, $3)`, [5, "O'Hara'); drop table x; --", '1.50']);
    assert.is(inserted.command, 'INSERT');
    assert.is(inserted.rowCount, 1);
  });
  assert.equal((await raw.query(`select name, balance from ${S}.customers where id = 5`, [])).rows, [{ name: "O'Hara'); drop table x; --", balance: '1.5' }]);
  await withClient(target, ANALYST_TOKEN, async (client) => {
    assert.is((await failure(client.query(`insert into ${S}.customers values ($1, 'Eve', 1)`, [6]))).code, '42501');
  });
});

(url === undefined ? writes.skip : writes)('a row larger than a socket read arrives whole, within the default budget', async ({ target }) => {
  await withClient(target, ANALYST_TOKEN, async (client) => {
    const { rows } = await client.query(`select id, body from ${S}.lines where id = $1`, [1]);
    assert.is(rows[0]?.body, 'y'.repeat(300000));
    assert.equal((await client.query(`select id from ${S}.lines where id = $1`, [1])).rows, [{ id: 1 }]);
  });
});

writes.run();
