import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import {
  commandMissing, jdbc, jdbcMissing, pgClient, pgDump, postgresJs, psql, psqlMissing, pythonClient, pythonModulesMissing, SQLALCHEMY2_PATH, sqlAlchemy2Missing, type DoorTarget,
} from '../../support/sql-clients.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { skippedHere } from '../../support/backends.js';

export interface DoorBackend {
  name: string;
  family: 'postgres' | 'mysql';
  /** Why the backend is not available here; the suite is skipped. */
  skip?: string | undefined;
  open(): Promise<Datasource>;
  /** Close the datasource after the suite (not the process's shared PGlite). */
  closeAfter: boolean;
  /**
   * The schema the suite's tables go in: a schema of its own on the PostgreSQL family; on MySQL, where a
   * schema is a database, the database of the URL (the suite's own), whose tables it replaces.
   */
  schema: string;
  /**
   * The door forwards statements to the database (a PostgreSQL datasource, docs/sql.md#forwarding-a-vdb-on-postgresql): values come
   * in PostgreSQL's own text forms (`7.50`), not the logical types' canonical ones (`7.5`).
   */
  forwards?: boolean;
}

function schemaSetup(family: DoorBackend['family'], S: string): string[] {
  const pg = family === 'postgres';
  return [
    ...(pg
      ? [`drop schema if exists ${S} cascade`, `create schema ${S}`]
      : [`drop table if exists ${S}.products, ${S}.customers, ${S}.events`, `drop function if exists ${S}.price_with_tax`, `drop procedure if exists ${S}.archive`]),
    `create table ${S}.customers (id integer primary key, name varchar(80) not null, email varchar(80) not null, region varchar(20) not null)`,
    `create table ${S}.products (id integer primary key, name varchar(80) not null, price decimal(10, 2) not null, active boolean not null, added date not null)`,
    `insert into ${S}.customers (id, name, email, region) values (1, 'Ada', 'ada@example.com', 'North'), (2, 'Ben', 'ben@example.com', 'South'), (3, 'Chloe', 'chloe@example.com', 'North')`,
    `insert into ${S}.products (id, name, price, active, added) values
       (1, 'Tea', 4.25, true, '2024-01-31'), (2, 'Coffee', 7.50, true, '2024-02-29'), (3, 'Cocoa', 3.10, false, '2024-03-01')`,
    // an instant and a wall-clock time: timestamptz and timestamp; MySQL's TIMESTAMP and DATETIME
    `create table ${S}.events (id integer primary key, happened ${pg ? 'timestamptz' : 'timestamp'} not null, noted ${pg ? 'timestamp' : 'datetime'} not null)`,
    // the adapters' sessions run in UTC
    `insert into ${S}.events (id, happened, noted) values (1, '2024-01-31 09:11:12', '2024-01-31 10:11:12')`,
    pg
      ? `create function ${S}.price_with_tax(price numeric, rate integer) returns numeric language sql immutable as 'select price * (100 + rate) / 100'`
      : `create function ${S}.price_with_tax(price decimal(10, 2), rate int) returns decimal(10, 2) deterministic return price * (100 + rate) / 100`,
    pg ? `create procedure ${S}.archive(event integer) language sql as ''` : `create procedure ${S}.archive(in event int) begin end`,
  ];
}

/**
 * The VDB `door`: a clerk may do everything (and execute price_with_tax); an analyst reads products and three
 * columns of customers.
 */
const doorVdb = (S: string) => `
name: door
version: "1"
datasource: retail_db
schemas:
  - { name: ${S} }
dataRoles:
  - name: clerk
    grants: [{ resource: ${S}, allow: [select, insert, update, delete] }]
  - name: analyst
    grants:
      - { resource: ${S}.products, allow: [select] }
      - { resource: ${S}.customers, allow: [select], columns: [id, name, region] }
`;

/** The lines of a dump's COPY block, from `COPY` to `\.`. */
function copyBlock(dump: string): string[] {
  const lines = dump.split('\n');
  const start = lines.findIndex((line) => line.startsWith('COPY '));
  return start < 0 ? [] : lines.slice(start, lines.indexOf('\\.', start) + 1);
}

/** The SQLSTATE `statement` fails with on `client`, or undefined when it succeeds. */
async function failure(client: pg.Client, statement: string): Promise<string | undefined> {
  return client.query(statement).then(() => undefined, (error: { code?: string }) => error.code ?? 'no code');
}

/**
 * Cursor statements and what each answered (command tag, rows, or SQLSTATE), in order: the same on the
 * door (as the analyst) and on PostgreSQL itself.
 */
async function cursorTranscript(client: pg.Client, S: string): Promise<string[]> {
  const lines: string[] = [];
  const run = async (statement: string, values: unknown[] = []) => {
    try {
      const result = await client.query({ text: statement, values, rowMode: 'array' });
      lines.push(`${result.command} ${result.rowCount ?? ''}: ${(result.rows as unknown[][]).map((row) => row.join(',')).join(' ')}`.trim());
    } catch (error) {
      lines.push(`error ${(error as { code?: string }).code}`);
    }
  };
  await run(`declare outside cursor for select id from ${S}.products`);
  await run('begin read only');
  await run(`declare c scroll cursor for select id, name from ${S}.products order by id`);
  for (const step of ['fetch 2 from c', 'fetch prior from c', 'fetch last from c', 'fetch next from c', 'fetch absolute 2 from c', 'fetch relative -1 from c',
    'move absolute 3 in c', 'fetch relative 0 from c', 'fetch backward all from c', 'fetch forward all from c', 'fetch absolute -2 from c', 'move forward all in c',
    'fetch first in c', 'fetch backward 5 in c', 'move backward all in c', 'fetch 0 from c', 'fetch all from c', 'close c', 'fetch c']) await run(step);
  await run('rollback');
  await run('begin');
  await run(`declare f no scroll cursor for select id from ${S}.products where id >= $1 order by id`, [2]);
  await run('fetch forward 1 from f');
  await run('fetch prior from f');
  await run('rollback');
  await run('begin');
  await run(`declare h cursor with hold for select id from ${S}.products order by id`);
  await run(`declare "Quoted" cursor for select name from ${S}.products order by id`);
  await run('fetch next from "Quoted"');
  await run('commit');
  await run('fetch next from "Quoted"');
  await run('fetch next from h');
  await run('move 1 in h');
  await run('fetch all in h');
  await run('close all');
  await run('fetch next from h');
  return lines;
}

/**
 * Savepoints (psycopg 3 brackets its own catalog reads in one when a transaction is open: SQLAlchemy 2 over
 * psycopg connects so) and what each statement answered, in order: the same on the door and on PostgreSQL.
 */
async function savepointTranscript(client: pg.Client, S: string): Promise<string[]> {
  const lines: string[] = [];
  const run = async (statement: string) => {
    try {
      const result = await client.query({ text: statement, rowMode: 'array' });
      lines.push(`${result.command}: ${(result.rows as unknown[][]).map((row) => row.join(',')).join(' ')}`.trim());
    } catch (error) {
      lines.push(`error ${(error as { code?: string }).code}`);
    }
  };
  for (const statement of ['savepoint a', 'release a', 'rollback to a', 'begin', 'savepoint a', `declare c1 cursor for select id from ${S}.products order by id`,
    'savepoint "B"', `declare c2 cursor for select id from ${S}.products order by id`, `select * from ${S}.no_such_table`, 'select 1', 'release a', 'rollback to b',
    'rollback to savepoint "B"', 'fetch next from c1', 'fetch next from c2', 'rollback work to a', 'fetch next from c1', 'rollback transaction to savepoint a',
    'release savepoint a', 'release a', 'rollback', 'begin', 'savepoint x', 'savepoint x', 'release x', 'rollback to x', 'select 2', 'commit']) await run(statement);
  return lines;
}

const SAVEPOINT_TRANSCRIPT = [
  // what PostgreSQL 15 answers
  'error 25P01', 'error 25P01', 'error 25P01', 'BEGIN:', 'SAVEPOINT:', 'DECLARE:', 'SAVEPOINT:', 'DECLARE:', 'error 42P01', 'error 25P02', 'error 25P02', 'error 3B001',
  'ROLLBACK:', 'FETCH: 1', 'error 34000', 'ROLLBACK:', 'error 34000', 'ROLLBACK:', 'RELEASE:', 'error 3B001', 'ROLLBACK:', 'BEGIN:', 'SAVEPOINT:', 'SAVEPOINT:',
  'RELEASE:', 'ROLLBACK:', 'SELECT: 2', 'COMMIT:',
];

const CURSOR_TRANSCRIPT = [
  // what PostgreSQL 15 answers (node-postgres' `command` is the tag's first word)
  'error 25P01', 'BEGIN :', 'DECLARE :', 'FETCH 2: 1,Tea 2,Coffee', 'FETCH 1: 1,Tea', 'FETCH 1: 3,Cocoa', 'FETCH 0:', 'FETCH 1: 2,Coffee', 'FETCH 1: 1,Tea', 'MOVE 1:',
  'FETCH 1: 3,Cocoa', 'FETCH 2: 2,Coffee 1,Tea', 'FETCH 3: 1,Tea 2,Coffee 3,Cocoa', 'FETCH 1: 2,Coffee', 'MOVE 1:', 'FETCH 1: 1,Tea', 'FETCH 0:', 'MOVE 0:', 'FETCH 0:', 'FETCH 3: 1,Tea 2,Coffee 3,Cocoa',
  'CLOSE :', 'error 34000', 'ROLLBACK :', 'BEGIN :', 'DECLARE :', 'FETCH 1: 2', 'error 55000', 'ROLLBACK :', 'BEGIN :', 'DECLARE :',
  'DECLARE :', 'FETCH 1: Tea', 'COMMIT :', 'error 34000', 'FETCH 1: 1', 'MOVE 1:', 'FETCH 1: 3', 'CLOSE :', 'error 34000',
];

/**
 * The SQL front door on one backend: the real service with `sql.enabled` on port 0, serving the VDB `door`
 * over the backend, and clients nobody on this project wrote (psql, node-postgres, postgres.js, the
 * PostgreSQL JDBC driver) connecting with the test tokens as passwords.
 */
export function runSqlDoorSuite(backend: DoorBackend): void {
  const S = backend.schema;
  const test = suite<{ service: TestService; raw: Datasource; target: DoorTarget }>(`${backend.name}: the SQL front door with real clients`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of schemaSetup(backend.family, S)) await context.raw.query(statement, []);
    context.service = await startTestService({
      config: demoConfig({ descriptors: './bundle', sql: { enabled: true, port: 0 } }),
      files: { 'bundle/vdbs/door.yaml': doorVdb(S) },
      datasources: { retail_db: context.raw },
    });
    context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'door@1' };
  });

  test.after(async ({ service, raw }) => {
    await service?.close();
    if (raw) await dropSyncedRoles(service, raw);
    if (backend.closeAfter) await raw?.close();
  });

  const missingPsql = psqlMissing();
  (missingPsql ? test.skip : test)(`psql: a query, a denial naming the column with SQLSTATE 42501, and the VDB named without its version${missingPsql ? ` (${missingPsql})` : ''}`, async ({ target }) => {
    const rows = await psql(target, ANALYST_TOKEN, [`select id, name, price, active from ${S}.products order by id`]);
    assert.is(rows.stderr, '');
    assert.is(rows.stdout, backend.forwards ? '1|Tea|4.25|t\n2|Coffee|7.50|t\n3|Cocoa|3.10|f\n' : '1|Tea|4.25|t\n2|Coffee|7.5|t\n3|Cocoa|3.1|f\n');
    const denied = await psql(target, ANALYST_TOKEN, [`select name, email from ${S}.customers`]);
    assert.is(denied.code, 1);
    assert.ok(denied.stderr.includes(`ERROR:  42501: select on column email of ${S}.customers is not granted`), denied.stderr);
    const unversioned = await psql({ ...target, database: 'door' }, ANALYST_TOKEN, [`select count(*) from ${S}.customers`]);
    assert.is(unversioned.stdout, '3\n', unversioned.stderr);
  });

  test('node-postgres: the extended protocol with parameters, type OIDs, a named statement run twice, and a denial that leaves the connection usable', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      const result = await client.query(`select id, name, price, active from ${S}.products where id = $1 or name = $2 order by id`, [3, 'Tea']);
      assert.equal(result.rows, [{ id: 1, name: 'Tea', price: '4.25', active: true }, { id: 3, name: 'Cocoa', price: backend.forwards ? '3.10' : '3.1', active: false }]);
      // int4, text (PostgreSQL's own varchar where forwarded), numeric, bool (docs/logical-types.md → docs/sql.md#types)
      assert.equal(result.fields.map((field) => field.dataTypeID), [23, backend.forwards ? 1043 : 25, 1700, 16]);
      const named = { name: 'by_region', text: `select name from ${S}.customers where region = $1 order by id` };
      assert.equal((await client.query({ ...named, values: ['North'] })).rows, [{ name: 'Ada' }, { name: 'Chloe' }]);
      assert.equal((await client.query({ ...named, values: ['South'] })).rows, [{ name: 'Ben' }]);
      const denied = await client.query(`select email from ${S}.customers where id = $1`, [1]).then(() => undefined, (error: { code?: string; message: string }) => error);
      assert.is(denied?.code, '42501');
      assert.match(denied?.message ?? '', /email/);
      const dates = await client.query(`select added from ${S}.products where id = $1`, [2]);
      assert.is(dates.fields[0]?.dataTypeID, 1082);
      assert.is((await client.query('select 1 + 1 as two')).rows[0]?.two, 2);
    } finally {
      await client.end();
    }
  });

  test('postgres.js: tagged queries with parameters (Parse, Describe of the statement, then Bind and Execute); a denial is 42501', async ({ target }) => {
    const sql = postgresJs(target, ANALYST_TOKEN);
    try {
      const rows = await sql`select id, name, region from ${sql.unsafe(`${S}.customers`)} where id in (${1}, ${3}) order by id`;
      assert.equal([...rows], [{ id: 1, name: 'Ada', region: 'North' }, { id: 3, name: 'Chloe', region: 'North' }]);
      const again = await sql`select id, name, region from ${sql.unsafe(`${S}.customers`)} where id in (${2}, ${3}) order by id`;
      assert.equal(again.map((row) => row['name']), ['Ben', 'Chloe']);
      const denied = await sql`select email from ${sql.unsafe(`${S}.customers`)}`.then(() => undefined, (error: { code?: string }) => error);
      assert.is(denied?.code, '42501');
    } finally {
      await sql.end();
    }
  });

  const missingJdbc = jdbcMissing();
  (missingJdbc ? test.skip : test)(`JDBC: a Statement, a PreparedStatement run past prepareThreshold (binary results), a string parameter and a denial${missingJdbc ? ` (${missingJdbc})` : ''}`, async ({ target }) => {
    const lines = await jdbc(target, ANALYST_TOKEN, [
      `query:select id, name from ${S}.customers order by id`,
      `prepared:select id, name, price, active, added from ${S}.products where id = ?|2`,
      `prepared-text:select id from ${S}.customers where name = ?|Chloe`,
      `query:select email from ${S}.customers`,
      'query:select 40 + 2',
    ]);
    assert.equal(lines, [
      '1|Ada', '2|Ben', '3|Chloe',
      backend.forwards ? '2|Coffee|7.50|t|2024-02-29' : '2|Coffee|7.5|t|2024-02-29',
      '3',
      `error 42501 ERROR: select on column email of ${S}.customers is not granted`,
      '42',
    ]);
  });

  (missingJdbc ? test.skip : test)(`JDBC DatabaseMetaData: getTables, getColumns and getPrimaryKeys list only what the analyst may read${missingJdbc ? ` (${missingJdbc})` : ''}`, async ({ target }) => {
    const lines = await jdbc(target, ANALYST_TOKEN, [`tables:${S}`, `columns:${S}|customers`, `pkeys:${S}|customers`, `columns:${S}|products`]);
    // the columns' own types on the PostgreSQL family; MySQL's names show as their logical types
    const varchar = backend.family === 'postgres' ? 'varchar' : 'text';
    assert.equal(lines, [
      `${S}|customers|TABLE`, `${S}|products|TABLE`,
      'id|int4|NO', `name|${varchar}|NO`, `region|${varchar}|NO`,
      'id|1',
      'id|int4|NO', `name|${varchar}|NO`, 'price|numeric|NO', 'active|bool|NO', 'added|date|NO',
    ], 'no email column, and no relation outside the VDB or the grants');
  });

  (missingPsql ? test.skip : test)(`psql \\dt and \\d: only the relations and columns the analyst may read${missingPsql ? ` (${missingPsql})` : ''}`, async ({ target }) => {
    const listed = await psql(target, ANALYST_TOKEN, [`\\dt ${S}.*`]);
    const described = await psql(target, ANALYST_TOKEN, [`\\d ${S}.customers`]);
    // owned by the analyst's database role, the role its statements run as
    assert.equal(listed.stdout.trim().split('\n').map((line) => line.split('|').slice(0, 4).join('|')),
      [`${S}|customers|table|vdb_door_v1_analyst`, `${S}|products|table|vdb_door_v1_analyst`], listed.stderr);
    const [name, region] = backend.family === 'postgres' ? ['character varying(80)', 'character varying(20)'] : ['text', 'text'];
    assert.equal(described.stdout.trim().split('\n'), ['id|integer||not null|', `name|${name}||not null|`, `region|${region}||not null|`], described.stderr);
  });

  (missingPsql ? test.skip : test)(`psql \\df: the functions the caller may execute, with their signatures; current_user is its database role${missingPsql ? ` (${missingPsql})` : ''}`, async ({ target }) => {
    const clerk = await psql(target, ADMIN_TOKEN, [`\\df ${S}.*`]);
    assert.equal(clerk.stdout.trim().split('\n'), [`${S}|archive||IN integer|proc`, `${S}|price_with_tax|numeric|numeric, integer|func`], clerk.stderr);
    const analyst = await psql(target, ANALYST_TOKEN, [`\\df ${S}.*`, 'select current_user, session_user']);
    assert.equal(analyst.stdout, 'vdb_door_v1_analyst|vdb_door_v1_analyst\n', analyst.stderr);
    const described = await psql(target, ADMIN_TOKEN, [`\\d ${S}.events`]);
    assert.equal(described.stdout.trim().split('\n'), ['id|integer||not null|', 'happened|timestamp with time zone||not null|', 'noted|timestamp without time zone||not null|'], described.stderr);
  });

  (missingPsql ? test.skip : test)(`psql: version() and server_version_num name the server the door reports at startup; \\du and \\dn show only the caller's role and the VDB's schemas${missingPsql ? ` (${missingPsql})` : ''}`, async ({ target }) => {
    const version = await psql(target, ANALYST_TOKEN, ['select version()', "select pg_catalog.current_setting('server_version_num'), current_setting('search_path') <> ''", 'show server_version']);
    assert.equal(version.stdout.trim().split('\n'), ['PostgreSQL 15.0 (vdb-service)', '150000|t', '15.0 (vdb-service)'], version.stderr);
    const roles = await psql(target, ANALYST_TOKEN, ['\\du']);
    assert.equal(roles.stdout.trim().split('\n').map((line) => line.split('|')[0]), ['vdb_door_v1_analyst'], roles.stderr);
    const schemas = await psql(target, ANALYST_TOKEN, ['\\dn']);
    assert.equal(schemas.stdout.trim().split('\n').map((line) => line.split('|')[0]), [S], schemas.stderr);
  });

  test('node-postgres: an instant is timestamptz (1184) in RowDescription and in UTC, a wall-clock time timestamp (1114)', async ({ target }) => {
    const client = pgClient(target, ADMIN_TOKEN);
    await client.connect();
    try {
      const result = await client.query({ text: `select happened, noted from ${S}.events where id = $1`, values: [1], rowMode: 'array' });
      assert.equal(result.fields.map((field) => field.dataTypeID), [1184, 1114]);
      const [happened] = result.rows[0] as [Date, Date];
      assert.is(happened.toISOString(), '2024-01-31T09:11:12.000Z');
      client.setTypeParser(1114, (text: string) => text);
      client.setTypeParser(1184, (text: string) => text);
      const text = await client.query({ text: `select happened, noted from ${S}.events`, rowMode: 'array' });
      assert.equal(text.rows, [['2024-01-31 09:11:12+00', '2024-01-31 10:11:12']]);
    } finally {
      await client.end();
    }
  });

  (missingJdbc ? test.skip : test)(`JDBC getFunctions, getProcedures, getFunctionColumns and getColumns: functions by the grants, timestamptz for an instant${missingJdbc ? ` (${missingJdbc})` : ''}`, async ({ target }) => {
    const clerk = await jdbc(target, ADMIN_TOKEN, [`functions:${S}`, `procedures:${S}`, `function-columns:${S}|price_with_tax`, `columns:${S}|events`]);
    assert.equal(clerk, [
      // pgjdbc: getFunctions lists functions, getProcedures procedures
      `${S}|price_with_tax`, `${S}|archive`,
      'returnValue|numeric', '$1|numeric', '$2|int4',
      'id|int4|NO', 'happened|timestamptz|NO', 'noted|timestamp|NO',
    ]);
    assert.equal(await jdbc(target, ANALYST_TOKEN, [`functions:${S}`, `procedures:${S}`]), [], 'the analyst may execute no function');
  });

  test('SHOW in every form PostgreSQL 15 accepts, answered as it answers them (SQLAlchemy asks SHOW TRANSACTION ISOLATION LEVEL at connect)', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      const shown = async (statement: string) => {
        const result = await client.query(statement);
        return { fields: result.fields.map((field) => field.name), rows: result.rows.map((row) => Object.values(row as object)) };
      };
      assert.equal(await shown('SHOW TRANSACTION ISOLATION LEVEL'), { fields: ['transaction_isolation'], rows: [['read committed']] });
      assert.equal(await shown('show time  zone'), { fields: ['TimeZone'], rows: [['UTC']] });
      assert.equal(await shown('show timezone'), { fields: ['TimeZone'], rows: [['UTC']] });
      assert.equal(await shown('SHOW "DateStyle"'), { fields: ['DateStyle'], rows: [['ISO, MDY']] });
      assert.equal(await shown('SHOW SESSION AUTHORIZATION'), { fields: ['session_authorization'], rows: [['vdb_door_v1_analyst']] });
      assert.equal(await shown('show role'), { fields: ['role'], rows: [['none']] });
      assert.equal(await shown('show transaction_read_only'), { fields: ['transaction_read_only'], rows: [['on']] });
      const all = await shown('SHOW ALL');
      assert.equal(all.fields, ['name', 'setting', 'description']);
      assert.equal(all.rows.find((row) => row[0] === 'server_version')?.[1], '15.0 (vdb-service)');
      assert.equal(all.rows.find((row) => row[0] === 'TimeZone')?.[1], 'UTC');
      const unknown = await client.query('show no_such_setting').then(() => undefined, (error: { code?: string }) => error);
      assert.is(unknown?.code, '42704');
    } finally {
      await client.end();
    }
  });

  test('cursors: DECLARE (SCROLL, WITH HOLD, a parameter), FETCH and MOVE in every direction, CLOSE, as PostgreSQL 15 answers them', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      const transcript = await cursorTranscript(client, S);
      assert.equal(transcript, CURSOR_TRANSCRIPT);
      const url = process.env['VDB_TEST_POSTGRES_URL'];
      if (backend.forwards && url !== undefined) {
        // the same statements on PostgreSQL itself, as its superuser, answer the same
        const direct = new pg.Client({ connectionString: url });
        await direct.connect();
        try {
          assert.equal(await cursorTranscript(direct, S), transcript);
        } finally {
          await direct.end();
        }
      }
    } finally {
      await client.end();
    }
  });

  test('savepoints: SAVEPOINT, RELEASE, ROLLBACK TO (the block usable again, cursors declared since closed), as PostgreSQL 15 answers them', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      const transcript = await savepointTranscript(client, S);
      const url = process.env['VDB_TEST_POSTGRES_URL'];
      if (backend.forwards && url !== undefined) {
        const direct = new pg.Client({ connectionString: url });
        await direct.connect();
        try {
          assert.equal(await savepointTranscript(direct, S), SAVEPOINT_TRANSCRIPT, 'PostgreSQL answers so');
        } finally {
          await direct.end();
        }
      }
      assert.equal(transcript, SAVEPOINT_TRANSCRIPT);
    } finally {
      await client.end();
    }
  });

  test('cursors are authorized as any statement: a hidden column is 42501 at DECLARE, and the transaction is then aborted (25P02)', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      await client.query('begin read only');
      assert.is(await failure(client, `declare c cursor for select email from ${S}.customers`), '42501');
      assert.is(await failure(client, 'fetch next from c'), '25P02');
      await client.query('rollback');
      assert.is(await failure(client, 'fetch next from c'), '34000');
    } finally {
      await client.end();
    }
  });

  test('LOCK … IN ACCESS SHARE MODE in a read-only transaction, on a relation the caller may see; refused otherwise', async ({ target }) => {
    const client = pgClient(target, ANALYST_TOKEN);
    await client.connect();
    try {
      assert.is(await failure(client, `lock table ${S}.products in access share mode`), '25P01', 'outside a transaction block, as PostgreSQL');
      await client.query('begin transaction read only');
      assert.is((await client.query(`LOCK TABLE ${S}.products IN ACCESS SHARE MODE`)).command, 'LOCK');
      assert.is((await client.query(`lock ${S}.products, only ${S}.customers in access share mode`)).command, 'LOCK');
      await client.query('commit');
      await client.query('begin');
      assert.is(await failure(client, `lock table ${S}.events in access share mode`), '42P01', 'a relation the grants hide does not exist');
      await client.query('rollback');
      await client.query('begin');
      assert.is(await failure(client, `lock table ${S}.products`), '0A000', 'ACCESS EXCLUSIVE: the door holds no lock');
      await client.query('rollback');
    } finally {
      await client.end();
    }
  });

  (missingJdbc ? test.skip : test)(`JDBC getSchemas: the VDB's schemas and PostgreSQL's own, no schema of the door's${missingJdbc ? ` (${missingJdbc})` : ''}`, async ({ target }) => {
    assert.equal(await jdbc(target, ANALYST_TOKEN, ['schemas']), ['information_schema', 'pg_catalog', S]);
  });

  const missingPsycopg = pythonModulesMissing('psycopg2', 'psycopg');
  (missingPsycopg ? test.skip : test)(`psycopg2 and psycopg 3 named cursors: fetched in batches, WITH HOLD across a commit, scrolled back${missingPsycopg ? ` (${missingPsycopg})` : ''}`, async ({ target }) => {
    const query = `select id, name from ${S}.customers order by id`;
    assert.equal(await pythonClient(target, ANALYST_TOKEN, 'psycopg2-named', [query]), [
      [[1, 'Ada'], [2, 'Ben'], [3, 'Chloe']],
      [[[1, 'Ada'], [2, 'Ben']], [[3, 'Chloe']]],
    ]);
    assert.equal(await pythonClient(target, ANALYST_TOKEN, 'psycopg3-named', [`select id, name from ${S}.customers where id >= %s order by id`, '1']), [
      [['id', 'name'], [[1, 'Ada'], [2, 'Ben']], [[3, 'Chloe']], []],
      [[[1, 'Ada'], [2, 'Ben'], [3, 'Chloe']], [[1, 'Ada']]],
    ]);
  });

  const missingAlchemy = pythonModulesMissing('psycopg2', 'sqlalchemy', 'pandas');
  (missingAlchemy ? test.skip : test)(`SQLAlchemy inspect() and a Core select; pandas read_sql with an engine, in chunks and streamed${missingAlchemy ? ` (${missingAlchemy})` : ''}`, async ({ target }) => {
    const pg = backend.family === 'postgres';
    const [name, region, price] = pg ? ['VARCHAR(80)', 'VARCHAR(20)', 'NUMERIC(10, 2)'] : ['TEXT', 'TEXT', 'NUMERIC'];
    assert.equal(await pythonClient(target, ANALYST_TOKEN, 'sqlalchemy', [S, 'customers']), [
      ['information_schema', S],
      ['customers', 'products'],
      [],
      ['customers', [['id', 'INTEGER', false], ['name', name, false], ['region', region, false]], ['id'], []],
      ['products', [['id', 'INTEGER', false], ['name', name, false], ['price', price, false], ['active', 'BOOLEAN', false], ['added', 'DATE', false]], ['id'], []],
      [[2, 'Ben'], [3, 'Chloe']],
    ], 'no email column, no relation the grants hide');
    const rows = [[1, 'Ada'], [2, 'Ben'], [3, 'Chloe']];
    assert.equal(await pythonClient(target, ANALYST_TOKEN, 'pandas', [`select id, name from ${S}.customers order by id`]), [
      [['id', 'name'], rows],
      [rows.slice(0, 2), rows.slice(2)],
      [rows.slice(0, 2), rows.slice(2)],
    ]);
  });

  const missingAlchemy2 = sqlAlchemy2Missing();
  (missingAlchemy2 ? test.skip : test)(`SQLAlchemy 2 inspect(): schemas, tables, views, columns, keys; a Core select${missingAlchemy2 ? ` (${missingAlchemy2})` : ''}`, async ({ target }) => {
    const pg = backend.family === 'postgres';
    const [name, region, price] = pg ? ['VARCHAR(80)', 'VARCHAR(20)', 'NUMERIC(10, 2)'] : ['TEXT', 'TEXT', 'NUMERIC'];
    assert.equal(await pythonClient(target, ANALYST_TOKEN, 'sqlalchemy2', [S, 'customers'], 'tester', SQLALCHEMY2_PATH), [
      '2',
      ['information_schema', S],
      ['customers', 'products'],
      [],
      ['customers', [['id', 'INTEGER', false], ['name', name, false], ['region', region, false]], ['id'], []],
      ['products', [['id', 'INTEGER', false], ['name', name, false], ['price', price, false], ['active', 'BOOLEAN', false], ['added', 'DATE', false]], ['id'], []],
      [[2, 'Ben'], [3, 'Chloe']],
    ], 'no email column, no relation the grants hide');
  });

  const missingDump = commandMissing('pg_dump', 'postgresql-client');
  (missingDump ? test.skip : test)(`pg_dump --schema-only of what the analyst may see, and --data-only of a table, with COPY and with --inserts (PostgreSQL family)${missingDump ? ` (${missingDump})` : ''}`, async ({ target }) => {
    const schema = await pgDump(target, ANALYST_TOKEN, ['--schema-only', '-n', S]);
    assert.is(schema.code, 0, schema.stderr);
    // the columns' own types on the PostgreSQL family (MySQL's names show as their logical types)
    const pg = backend.family === 'postgres';
    const [name, region, price] = pg ? ['character varying(80)', 'character varying(20)', 'numeric(10,2)'] : ['text', 'text', 'numeric'];
    assert.ok(schema.stdout.includes(`CREATE TABLE ${S}.customers (\n    id integer NOT NULL,\n    name ${name} NOT NULL,\n    region ${region} NOT NULL\n);`), schema.stdout);
    assert.ok(schema.stdout.includes(`CREATE TABLE ${S}.products (\n    id integer NOT NULL,\n    name ${name} NOT NULL,\n    price ${price} NOT NULL,\n    active boolean NOT NULL,\n    added date NOT NULL\n);`), schema.stdout);
    assert.ok(schema.stdout.includes(`ALTER TABLE ONLY ${S}.products\n    ADD CONSTRAINT products_pkey PRIMARY KEY (id);`), schema.stdout);
    assert.ok(schema.stdout.includes("SELECT pg_catalog.set_config('search_path', '', false);"), 'the search path pg_dump set, as it reads it back');
    assert.not.match(schema.stdout, /email|events|SET STATISTICS|pg_toast/);
    // pg_dump reads rows in PostgreSQL's SQL (`FROM ONLY`), which a VDB on MySQL does not take
    if (backend.family !== 'postgres') return;
    const data = await pgDump(target, ADMIN_TOKEN, ['--data-only', '--inserts', '-t', `${S}.customers`]);
    assert.is(data.code, 0, data.stderr);
    const inserts = data.stdout.split('\n').filter((line) => line.startsWith('INSERT'));
    assert.equal(inserts, [
      `INSERT INTO ${S}.customers VALUES (1, 'Ada', 'ada@example.com', 'North');`,
      `INSERT INTO ${S}.customers VALUES (2, 'Ben', 'ben@example.com', 'South');`,
      `INSERT INTO ${S}.customers VALUES (3, 'Chloe', 'chloe@example.com', 'North');`,
    ]);
    // without --inserts: COPY … TO STDOUT
    const copied = await pgDump(target, ADMIN_TOKEN, ['--data-only', '-t', `${S}.customers`]);
    assert.is(copied.code, 0, copied.stderr);
    const copy = copyBlock(copied.stdout);
    assert.equal(copy, [
      `COPY ${S}.customers (id, name, email, region) FROM stdin;`,
      '1\tAda\tada@example.com\tNorth', '2\tBen\tben@example.com\tSouth', '3\tChloe\tchloe@example.com\tNorth', '\\.',
    ]);
    const url = process.env['VDB_TEST_POSTGRES_URL'];
    if (backend.forwards && url !== undefined) {
      // pg_dump of the same table on PostgreSQL itself writes the same rows
      const { hostname, port, pathname, username } = new URL(url);
      const server = { host: hostname, port: Number(port || 5432), database: pathname.slice(1) };
      const direct = await pgDump(server, '', ['--data-only', '--inserts', '-t', `${S}.customers`], username);
      assert.equal(direct.stdout.split('\n').filter((line) => line.startsWith('INSERT')), inserts, direct.stderr);
      assert.equal(copyBlock((await pgDump(server, '', ['--data-only', '-t', `${S}.customers`], username)).stdout), copy);
    }
  });

  const missingPgcli = commandMissing('pgcli', 'pgcli') ?? pythonModulesMissing('pty');
  (missingPgcli ? test.skip : test)(`pgcli, in a pseudo-terminal: connects, runs a query, quits${missingPgcli ? ` (${missingPgcli})` : ''}`, async ({ target }) => {
    const [shown] = await pythonClient(target, ANALYST_TOKEN, 'pgcli', [`select id, name from ${S}.customers where id < 3 order by id`]) as string[];
    const plain = (shown ?? '').replace(/\u001b\[[0-9;?]*[a-zA-Z]/g, '').replace(/\r/g, '');
    assert.match(plain, /\| 1 +\| Ada +\|\n\| 2 +\| Ben +\|/);
    assert.match(plain, /SELECT 2/);
  });

  test('writes: refused as not read-only (25006) while sql.allowWrites is off, even for the clerk', async ({ target, raw }) => {
    const client = pgClient(target, ADMIN_TOKEN);
    await client.connect();
    try {
      const refused = await client.query(`update ${S}.products set price = 1 where id = $1`, [1]).then(() => undefined, (error: { code?: string }) => error);
      assert.is(refused?.code, '25006');
      assert.equal((await raw.query(`select price from ${S}.products where id = 1`, [])).rows, [{ price: '4.25' }]);
    } finally {
      await client.end();
    }
  });

  test.run();
}
