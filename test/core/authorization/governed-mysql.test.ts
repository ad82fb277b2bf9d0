import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { callerExecutor, type CallerExecutor } from '../../../core/statements/statement-pipeline.js';
import { effectiveGrants } from '../../../core/authorization/grants.js';
import { planVdbRoles } from '../../../core/authorization/role-plan.js';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { prepareService } from '../../../core/service.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { databaseDenialError } from '../../../core/sql/read-failure.js';
import { StatementFailure, statementFailure } from '../../../core/sql/statement-failure.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, writeBundle, type TestService } from '../../support/test-service.js';

/**
 * Governed execution on MariaDB (MySQL): a user per data role and per role set, logged in as for each
 * caller, holding exactly the grants, so that the database refuses what the grants do not cover even
 * with the analyzer left out. Tables live in the database of `VDB_TEST_MYSQL_URL`; the users are
 * server-wide, so their names carry that database's name, and each test drops only the users it made.
 */
const url = process.env['VDB_TEST_MYSQL_URL'];
const DB = url === undefined ? '' : new URL(url).pathname.slice(1);
const VDB = `gov_${DB}`;
const AUDITOR_USER = `gov_${DB}_auditor`.slice(0, 32);
/** The users the operator makes for `roles.sync: false`. */
const OPERATOR_ANALYST = `gov_${DB}_op_analyst`.slice(0, 32);
const OPERATOR_CLERK = `gov_${DB}_op_clerk`.slice(0, 32);
const OPERATOR_PASSWORD = 'operator-made-1';
const AUDITOR_TOKEN = 'governed-auditor-token';
const BOTH_TOKEN = 'governed-analyst-auditor-token';
const TASKS = `/api/v1/capabilities/answer/vdbs/${VDB}/versions/1/tasks`;
const EMAIL = /@example\.com/;

const SETUP = [
  `drop table if exists ${DB}.orders`,
  `drop table if exists ${DB}.customers`,
  `create table ${DB}.customers (id integer auto_increment primary key, email varchar(80) not null, name varchar(80) not null, region varchar(20) not null)`,
  `create table ${DB}.orders (id integer auto_increment primary key, customer_id integer not null references ${DB}.customers (id), total decimal(10, 2) not null)`,
  `insert into ${DB}.customers (email, name, region) values ('ada@example.com', 'Ada', 'North'), ('ben@example.com', 'Ben', 'South'), ('chloe@example.com', 'Chloe', 'North')`,
  `insert into ${DB}.orders (customer_id, total) values (1, 10.50), (2, 20.00), (3, 7.25)`,
];

function vdbFile(options: { analystColumns?: readonly string[]; connections?: { analyst: string; clerk: string } } = {}): string {
  const { analystColumns = ['id', 'region'], connections } = options;
  const auditor = connections ? '' : `  - name: auditor
    dbRole: ${AUDITOR_USER}
    grants: [{ resource: ${DB}.customers, allow: [select], columns: [id, email] }]
`;
  return `name: ${VDB}
version: "1"
datasource: retail_db
schemas: [{ name: ${DB} }]
dataRoles:
  - name: analyst${connections ? `\n    connection: ${connections.analyst}` : ''}
    grants:
      - { resource: ${DB}.orders, allow: [select] }
      - { resource: ${DB}.customers, allow: [select], columns: [${analystColumns.join(', ')}] }
  - name: clerk${connections ? `\n    connection: ${connections.clerk}` : ''}
    grants: [{ resource: ${DB}, allow: [select, insert, update, delete] }]
${auditor}`;
}

const header = `type: sqlDirect\nvirtualDatabase: ${VDB}\n`;

function bundle(options: Parameters<typeof vdbFile>[0] = {}): Record<string, string> {
  return {
    'bundle/vdbs/governed.yaml': vdbFile(options),
    'bundle/queries/gov_regions.yaml': `---\n${header}query: select id, region from ${DB}.customers order by id\n`,
    'bundle/queries/gov_orders.yaml': `---\n${header}query: select id, total from ${DB}.orders order by id\n`,
    'bundle/actions/gov_add_order.yaml': `---
virtualDatabase: ${VDB}
needed:
  fields: [customerId, total]
operations:
  - name: insert_order
    type: insert
    entity: ${DB}.orders
    valueAssignments:
      - { field: customer_id, value: {{ customerId }}, dataType: integer }
      - { field: total, value: {{ total }}, dataType: decimal }
`,
  };
}

function config(datasources?: Record<string, unknown>): Record<string, unknown> {
  const base = demoConfig({ descriptors: './bundle' });
  const auth = base['auth'] as { tokens: unknown[] };
  auth.tokens.push({ token: AUDITOR_TOKEN, subject: 'auditor', roles: ['auditor'] }, { token: BOTH_TOKEN, subject: 'both', roles: ['analyst', 'auditor'] });
  return { ...base, datasources: datasources ?? { retail_db: { adapter: 'mysql', connection: { connectionString: url } } } };
}

function urlAs(user: string, password: string): string {
  const as = new URL(url ?? '');
  as.username = user;
  as.password = password;
  return as.toString();
}

const open = async (connectionString: string): Promise<Datasource> => runtimeOver(await new MysqlDialect('mysql').open({
  name: 'retail_db', adapter: 'mysql', connection: { connectionString }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
}));

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function post(service: TestService, path: string, body: unknown, token: string): Promise<Reply> {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The executor the routes use, for the given data roles: the second gate alone, without the analyzer. */
async function asCaller(service: TestService, roles: string[], readOnly: boolean, timeoutMs = 10_000): Promise<CallerExecutor> {
  const vdb = service.container.resolve(coreTokens.vdbs).find(VDB, '1');
  if (!vdb) throw new Error(`VDB ${VDB} is not loaded`);
  const datasource = await service.container.resolve(coreTokens.datasources).open('retail_db');
  return callerExecutor(datasource, vdb, effectiveGrants(vdb, { subject: roles.join('+'), roles, scheme: 'bearer' }), { readOnly, timeoutMs });
}

/** The driver's error a statement failed with, under the StatementFailure the runtime seam classified it as. */
const failure = (work: Promise<unknown>): Promise<{ errno?: unknown } | undefined> => work.then(() => undefined, (error: unknown) => (
  error instanceof StatementFailure ? error.driverError : error) as { errno?: unknown });

const plannedUsers = (service: TestService): string[] => {
  const vdb = service.container.resolve(coreTokens.vdbs).find(VDB, '1');
  return (vdb && planVdbRoles(vdb, 'retail_db', 32)?.roles.map((role) => role.name)) ?? [];
};

const count = async (raw: Datasource, table: string): Promise<string> => String((await raw.query(`select count(*) as n from ${DB}.${table}`, [])).rows[0]?.['n']);

const test = suite<{ raw: Datasource; service: TestService }>('mysql: governed execution, a user per data role as the authoritative gate');

if (url === undefined) {
  test.skip('(VDB_TEST_MYSQL_URL is not set)', () => undefined);
} else {
  test.before(async (context) => {
    context.raw = await open(url);
    for (const statement of SETUP) await context.raw.query(statement, []);
    context.service = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: context.raw } });
  });
  test.after(async ({ raw, service }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw);
    await raw.query(`drop table if exists ${DB}.orders`, []);
    await raw.query(`drop table if exists ${DB}.customers`, []);
    await raw.close();
  });

  test('startup makes a user per data role and per role set, locked to its grants; a second start changes nothing, not even the passwords; no password is logged', async ({ raw, service }) => {
    const users = plannedUsers(service);
    assert.is(users.length, 3 + 4, 'three data roles, four sets of two or more');
    assert.ok(users.every((user) => Buffer.byteLength(user) <= 32), 'MySQL user names fit 32 bytes');
    const existing = (await raw.query(`select User as name from mysql.user where Host = '%' and User in (${users.map(() => '?').join(', ')})`, users)).rows;
    assert.is(existing.length, users.length);
    const analyst = users.find((user) => user.endsWith('_analyst')) ?? '';
    const grantee = `'${analyst}'@'%'`;
    const columns = (await raw.query(`select TABLE_NAME as t, COLUMN_NAME as c, PRIVILEGE_TYPE as p from information_schema.COLUMN_PRIVILEGES
      where GRANTEE = ? order by 1, 2, 3`, [grantee])).rows.map((row) => `${row['p']} ${row['t']}.${row['c']}`);
    assert.equal(columns, ['SELECT customers.id', 'SELECT customers.region']);
    const tables = (await raw.query('select TABLE_NAME as t, PRIVILEGE_TYPE as p from information_schema.TABLE_PRIVILEGES where GRANTEE = ? order by 1, 2', [grantee]))
      .rows.map((row) => `${row['p']} ${row['t']}`);
    assert.equal(tables, ['SELECT orders']);
    assert.ok(users.includes(AUDITOR_USER), 'the auditor\'s user has its dbRole name');

    // a second instance: its own pools, as another process has
    const second = await open(url as string);
    const again = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: second } });
    await again.close();
    await second.close();
    const synced = again.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'database roles of the data roles synced');
    assert.equal(synced.map((line) => line['changes']), [0]);
    // the first instance still logs in as its users after the second's start: a pool of another time limit is a new login
    const fresh = await asCaller(service, ['analyst'], true, 7_000);
    assert.is((await fresh.query(`select id, region from ${DB}.customers`, [])).rowCount, 3);
    assert.not.ok([...service.logs, ...again.logs].some((line) => /identified by|password/i.test(line)), 'no password in the logs');
    const noPassword = await open(urlAs(analyst, '')).then(async (datasource) => { await datasource.close(); return 'connected'; }, () => 'refused');
    assert.is(noPassword, 'refused', 'the user cannot log in without its password');
  });

  test('the second gate alone: the analyst\'s user is refused the columns and tables its grants leave out, answered like the analyzer\'s denials', async ({ service }) => {
    const analyst = await asCaller(service, ['analyst'], true);
    assert.is((await analyst.query(`select id, region from ${DB}.customers`, [])).rowCount, 3);
    for (const sql of [
      `select email from ${DB}.customers`,
      `select * from ${DB}.customers`,
      `select id from ${DB}.customers where email like 'a%'`,
      `select count(*) from ${DB}.customers group by name`,
      `select x.e from (select email as e from ${DB}.customers) x`,
      `select id from ${DB}.customers order by email`,
    ]) {
      const error = await failure(analyst.query(sql, []));
      // a column privilege it lacks (1143); MariaDB names the table (1142) for `*`
      assert.ok(error?.errno === 1143 || error?.errno === 1142, `${sql}: ${String(error?.errno)}`);
      assert.equal([databaseDenialError(statementFailure(error)).code, databaseDenialError(statementFailure(error)).details], ['forbidden', { denial: 'forbidden' }], sql);
    }
    for (const [sql, errno] of [
      [`select id into outfile '/tmp/vdb_${DB}_leak' from ${DB}.orders`, 1227],
      ['select User, authentication_string from mysql.user', 1142],
      ['set global max_connections = 10', 1227],
    ] as const) {
      const error = await failure(analyst.query(sql, []));
      assert.is(error?.errno, errno, sql);
      assert.is(databaseDenialError(statementFailure(error)).code, 'forbidden', sql);
    }
    const auditor = await asCaller(service, ['auditor'], true);
    assert.is((await failure(auditor.query(`select total from ${DB}.orders`, [])))?.errno, 1142, 'a table the grants leave out');
    const clerk = await asCaller(service, ['clerk'], true);
    assert.match(JSON.stringify((await clerk.query(`select email from ${DB}.customers`, [])).rows), EMAIL, 'the clerk may read the emails');
  });

  test('Task API as the analyst: reads of the emails, by name, whole row, JSON, subquery or filter, are denied and none comes back', async ({ service }) => {
    for (const goal of [
      `select email from ${DB}.customers`,
      `select * from ${DB}.customers`,
      `select json_object('e', email) as j from ${DB}.customers`,
      `select (select email from ${DB}.customers order by id limit 1) as first_email`,
      `select id from ${DB}.customers where email like 'a%'`,
      `select c.id from ${DB}.customers c join ${DB}.customers d on d.email = c.email`,
    ]) {
      const reply = await post(service, TASKS, { goal }, ANALYST_TOKEN);
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      const artifacts = (reply.body['artifacts'] as { content: { data: string } }[] | undefined) ?? [];
      const text = `${JSON.stringify(reply.body)}\n${artifacts.map((artifact) => Buffer.from(artifact.content.data, 'base64').toString('utf8')).join('\n')}`;
      assert.match(text, /\(denied, (forbidden|function_not_allowed)\)/, goal);
      assert.not.match(text, EMAIL, goal);
    }
    const served = await post(service, TASKS, { goal: `select id, region from ${DB}.customers order by id` }, ANALYST_TOKEN);
    assert.is(served.body['state'], 'completed', 'within the grants the analyst is served');
  });

  test('a caller with several data roles runs as the user of their union: the auditor\'s emails with the analyst\'s orders', async ({ service }) => {
    const both = await asCaller(service, ['analyst', 'auditor'], true);
    const rows = await both.query(`select c.email, o.total from ${DB}.orders o join ${DB}.customers c on c.id = o.customer_id order by o.id`, []);
    assert.match(JSON.stringify(rows.rows), EMAIL);
    assert.is((await failure(both.query(`select name from ${DB}.customers`, [])))?.errno, 1143, 'not beyond the union');
  });

  test('read-only routes: the database refuses writes even to a user that may write, and no data changes', async ({ raw, service }) => {
    const before = await count(raw, 'orders');
    const clerk = await asCaller(service, ['clerk'], true);
    for (const sql of [`insert into ${DB}.orders (customer_id, total) values (1, 1)`, `delete from ${DB}.orders`, `update ${DB}.orders set total = 0`]) {
      const error = await failure(clerk.query(sql, []));
      assert.is(error?.errno, 1792, sql);
      assert.equal(databaseDenialError(statementFailure(error)).details, { denial: 'not_read_only' });
    }
    assert.is(await count(raw, 'orders'), before);
  });

  test('writes: the clerk\'s action inserts; the analyst is refused by the analyzer, and its user by the database, with no data changed', async ({ raw, service }) => {
    const before = Number(await count(raw, 'orders'));
    const clerk = await post(service, '/api/v1/actions/run/gov_add_order', { customerId: 2, total: '3.50' }, ADMIN_TOKEN);
    assert.equal([clerk.status, clerk.body['status']], [200, 'completed'], JSON.stringify(clerk.body));
    assert.is(Number(await count(raw, 'orders')), before + 1);
    const analyst = await post(service, '/api/v1/actions/run/gov_add_order', { customerId: 2, total: '3.50' }, ANALYST_TOKEN);
    assert.equal([analyst.status, analyst.body['code']], [403, 'forbidden']);
    const writer = await asCaller(service, ['analyst'], false);
    for (const sql of [`insert into ${DB}.orders (customer_id, total) values (1, 1)`, `update ${DB}.customers set email = 'x'`, `delete from ${DB}.orders`]) {
      const error = await failure(writer.transaction((transaction) => transaction.query(sql, [])));
      assert.ok(error?.errno === 1142 || error?.errno === 1143, `${sql}: ${String(error?.errno)}`);
    }
    assert.is(Number(await count(raw, 'orders')), before + 1);
    assert.is((await raw.query(`select count(*) as n from ${DB}.customers where email like '%@example.com'`, [])).rows[0]?.['n'], '3');
  });

  test('a privilege the database no longer grants: 403 forbidden on a query endpoint, a denied observation in a task; the next sync grants it again', async ({ raw, service }) => {
    const analyst = plannedUsers(service).find((user) => user.endsWith('_analyst')) ?? '';
    assert.is((await post(service, '/api/v1/query/perform/gov_orders', {}, ANALYST_TOKEN)).status, 200);
    await raw.query(`revoke select on ${DB}.orders from \`${analyst}\`@'%'`, []);
    const denied = await post(service, '/api/v1/query/perform/gov_orders', {}, ANALYST_TOKEN);
    assert.equal([denied.status, denied.body['code'], (denied.body['details'] as Record<string, unknown>)['denial']], [403, 'forbidden', 'forbidden'], JSON.stringify(denied.body));
    const task = await post(service, TASKS, { goal: `select id, total from ${DB}.orders` }, ANALYST_TOKEN);
    assert.is(task.status, 200, JSON.stringify(task.body));
    assert.match(JSON.stringify(task.body), /the database refused the statement.*1142/);
    const restored = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await restored.close();
    assert.is((await post(service, '/api/v1/query/perform/gov_orders', {}, ANALYST_TOKEN)).status, 200, 'the sync granted it again');
  });

  test('grants narrowed: the next sync revokes what the user holds beyond them', async ({ raw, service }) => {
    const analyst = await asCaller(service, ['analyst'], true);
    const user = plannedUsers(service).find((name) => name.endsWith('_analyst')) ?? '';
    await raw.query(`grant select (email) on ${DB}.customers to \`${user}\`@'%'`, []);
    const narrowed = await startTestService({ config: config(), files: bundle({ analystColumns: ['id'] }), datasources: { retail_db: raw } });
    await narrowed.close();
    assert.is((await failure(analyst.query(`select email from ${DB}.customers`, [])))?.errno, 1143);
    assert.is((await failure(analyst.query(`select region from ${DB}.customers`, [])))?.errno, 1143);
    const restored = await startTestService({ config: config(), files: bundle(), datasources: { retail_db: raw } });
    await restored.close();
    assert.is((await analyst.query(`select id, region from ${DB}.customers`, [])).rowCount, 3);
  });

  test('roles.sync false: each data role logs in through its own connection; a missing one stops startup; several roles are refused', async ({ raw }) => {
    // the clerk's grant is the whole schema: every table in it, including those other suites left there
    const tables = (await raw.query('select table_name as name from information_schema.tables where table_schema = ?', [DB])).rows;
    for (const [user, grants] of [
      [OPERATOR_ANALYST, [`select on ${DB}.orders`, `select (id, region) on ${DB}.customers`]],
      [OPERATOR_CLERK, tables.map((table) => `select, insert, update, delete on ${DB}.\`${String(table['name'])}\``)],
    ] as const) {
      await raw.query(`drop user if exists \`${user}\`@'%'`, []);
      await raw.query(`create user \`${user}\`@'%' identified by '${OPERATOR_PASSWORD}'`, []);
      for (const grant of grants) await raw.query(`grant ${grant} to \`${user}\`@'%'`, []);
    }
    const datasources = {
      retail_db: { adapter: 'mysql', connection: { connectionString: url }, roles: { sync: false } },
      gov_analyst_login: { adapter: 'mysql', connection: { connectionString: urlAs(OPERATOR_ANALYST, OPERATOR_PASSWORD) } },
      gov_clerk_login: { adapter: 'mysql', connection: { connectionString: urlAs(OPERATOR_CLERK, OPERATOR_PASSWORD) } },
    };
    try {
      const files = bundle({ connections: { analyst: 'gov_analyst_login', clerk: 'gov_clerk_login' } });
      const operated = await startTestService({ config: config(datasources), files, datasources: {} });
      try {
        assert.is((await post(operated, '/api/v1/query/perform/gov_regions', {}, ANALYST_TOKEN)).status, 200);
        const analyst = await asCaller(operated, ['analyst'], true);
        assert.is((await failure(analyst.query(`select email from ${DB}.customers`, [])))?.errno, 1143);
        const both = await asCaller(operated, ['analyst', 'clerk'], true);
        const refused = await both.query(`select id from ${DB}.orders`, []).then(() => undefined, (error: unknown) => error as { code?: unknown });
        assert.is(refused?.code, 'forbidden', 'no user stands for the pair');
        const before = Number(await count(raw, 'orders'));
        const added = await post(operated, '/api/v1/actions/run/gov_add_order', { customerId: 1, total: '2.00' }, ADMIN_TOKEN);
        assert.equal([added.status, added.body['status']], [200, 'completed'], 'the clerk writes through its own login');
        assert.is(Number(await count(raw, 'orders')), before + 1);
        assert.not.ok(operated.logs.some((line) => /beyond its grants|lacks/.test(line)), 'the operator\'s users hold exactly the grants');
      } finally {
        await operated.close();
      }
      // drift: validate reads each login's own privileges through it and names what is beyond the grants
      await raw.query(`grant select (email) on ${DB}.customers to \`${OPERATOR_ANALYST}\`@'%'`, []);
      const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
      const checked = await prepareService({ configFile: writeBundle(config(datasources), files), datasources: {}, env: {}, checkOnly: true, logDestination: sink });
      await checked.close();
      assert.equal(checked.roleWarnings.map((warning) => warning.message), [
        `datasources.retail_db: '${OPERATOR_ANALYST}'@'%', the login of data role analyst of VDB ${VDB}, holds select on column ${DB}.customers.email beyond its grants`,
      ]);
      const missing = bundle({ connections: { analyst: 'gov_analyst_login', clerk: 'gov_nowhere' } });
      const started = await startTestService({ config: config(datasources), files: missing, datasources: {} })
        .then(async (service) => { await service.close(); return ''; }, (error: unknown) => (error as Error).message);
      assert.match(started, /data role clerk of VDB .* connection gov_nowhere is not a datasource of service\.yaml with adapter mysql/);
      // the users are the operator's: one that does not log in stops startup, naming its role
      const wrong = { ...datasources, gov_analyst_login: { adapter: 'mysql', connection: { connectionString: urlAs(OPERATOR_ANALYST, 'not-the-password-9') } } };
      const refused = await startTestService({ config: config(wrong), files, datasources: {} })
        .then(async (service) => { await service.close(); return ''; }, (error: unknown) => (error as Error).message);
      assert.match(refused, /cannot log in as the database user of a data role: user of database role vdb_gov_\w+_analyst: Access denied/);
      assert.not.match(refused, /not-the-password-9/, 'no password in the message');
    } finally {
      for (const user of [OPERATOR_ANALYST, OPERATOR_CLERK]) await raw.query(`drop user if exists \`${user}\`@'%'`, []);
    }
  });
}

test.run();
