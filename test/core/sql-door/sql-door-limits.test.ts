import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { cancelUntilEnded, pgClient, postgresJs, psql, psqlMissing, type DoorTarget } from '../../support/sql-clients.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

/** The SQL front door of the demo (VDB retail, PGlite): who may connect, how many, for how long, and what it answers. */
const test = suite<{ service: TestService; target: DoorTarget }>('the SQL front door: connections, limits, cancellation and sessions');

const NO_ROLE_TOKEN = 'sql-door-no-role-token';
const MAX_CONNECTIONS = 60;

test.before(async (context) => {
  const config = demoConfig({ sql: { enabled: true, port: 0, maxConnections: MAX_CONNECTIONS } });
  (config['auth'] as { tokens: unknown[] }).tokens.push({ token: NO_ROLE_TOKEN, subject: 'visitor', roles: ['visitor'] });
  context.service = await startTestService({ config });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'retail@1' };
});

test.after(async ({ service }) => {
  await service?.close();
});

/** The part of node-postgres's protocol connection (pg.Connection) the malformed-message test drives. */
interface WireClient {
  stream: { write(data: Buffer): boolean };
  connect(port: number, host: string): void;
  startup(config: Record<string, string>): void;
  password(password: string): void;
  query(text: string): void;
  sync(): void;
  end(): void;
  on(event: string, listener: (...args: never[]) => void): void;
  once(event: string, listener: (...args: never[]) => void): void;
}

/** The error a connection attempt ends with. */
async function connectError(target: DoorTarget, token: string): Promise<{ code?: string; message: string } | undefined> {
  const client = pgClient(target, token);
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return error as { code?: string; message: string };
  }
}

test('a wrong token is 28P01, an unknown VDB 3D000, a VDB with two versions named without one 3D000, a caller with no data role 42501', async ({ target }) => {
  const wrong = await connectError(target, 'not-a-token');
  assert.is(wrong?.code, '28P01');
  assert.match(wrong?.message ?? '', /password authentication failed/);
  const unknown = await connectError({ ...target, database: 'nowhere@1' }, ANALYST_TOKEN);
  assert.is(unknown?.code, '3D000');
  const ambiguous = await connectError({ ...target, database: 'retail' }, ANALYST_TOKEN);
  assert.is(ambiguous?.code, '3D000');
  assert.match(ambiguous?.message ?? '', /2 versions/);
  const noRole = await connectError(target, NO_ROLE_TOKEN);
  assert.is(noRole?.code, '42501');
  assert.is(await connectError(target, ANALYST_TOKEN), undefined);
});

test('50 concurrent connections each run a query with their own parameter', async ({ target }) => {
  const clients = Array.from({ length: 50 }, () => pgClient(target, ANALYST_TOKEN));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    const ids = await Promise.all(clients.map(async (client, index) =>
      (await client.query('select id from sales.customers where id = $1', [index + 1])).rows[0]?.id));
    assert.equal(ids, Array.from({ length: 50 }, (_, index) => index + 1));
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  }
});

test(`past sql.maxConnections (${MAX_CONNECTIONS}) a connection is refused with 53300; once one closes, the next is served`, async ({ target }) => {
  const clients = Array.from({ length: MAX_CONNECTIONS }, () => pgClient(target, ANALYST_TOKEN));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    const refused = await connectError(target, ANALYST_TOKEN);
    assert.is(refused?.code, '53300');
    await (clients.pop() as pg.Client).end();
    // the door counts the connection out when its socket has closed
    let served: { code?: string } | undefined = { code: '53300' };
    while (served?.code === '53300') served = await connectError(target, ANALYST_TOKEN);
    assert.is(served, undefined);
  } finally {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
  }
});

test('extended protocol: queries pipelined on one connection (postgres.js); an error skips to its Sync, the others answer', async ({ target }) => {
  const sql = postgresJs(target, ANALYST_TOKEN);
  try {
    const results = await Promise.allSettled([
      sql`select ${1}::int as a`,
      sql`select email from sales.customers where id = ${1}`,
      sql`select no_such_column from sales.orders where id = ${1}`,
      sql`select ${'x'}::text as b`,
    ]);
    assert.equal(results.map((result) => result.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    assert.is((results[1] as PromiseRejectedResult).reason.code, '42501');
    assert.equal([...(results[3] as PromiseFulfilledResult<Record<string, unknown>[]>).value], [{ b: 'x' }]);
  } finally {
    await sql.end();
  }
});

test('a malformed message is answered 08P01 and skipped to Sync; the connection and the door serve on', async ({ target }) => {
  // node-postgres's protocol layer, driven by hand: it sends what a broken client would
  const connection = new (pg as unknown as { Connection: new () => WireClient }).Connection();
  const events: string[] = [];
  const ready = () => new Promise<void>((resolve) => connection.once('readyForQuery', () => resolve()));
  connection.on('errorMessage', (error: { code?: string }) => events.push(`error ${error.code}`));
  connection.on('dataRow', (row: { fields: unknown[] }) => events.push(`row ${String(row.fields[0])}`));
  connection.on('authenticationCleartextPassword', () => connection.password(ANALYST_TOKEN));
  const connected = ready();
  connection.on('connect', () => connection.startup({ user: 'tester', database: target.database }));
  connection.connect(target.port, '127.0.0.1');
  await connected;
  // a Bind whose body ends after its two names
  connection.stream.write(Buffer.from([0x42, 0, 0, 0, 6, 0, 0]));
  let answered = ready();
  connection.sync();
  await answered;
  answered = ready();
  connection.query('select 7 as seven');
  await answered;
  connection.end();
  assert.equal(events, ['error 08P01', 'row 7']);
});

test('session statements drivers send: SET, SHOW, BEGIN/COMMIT, an empty query; a catalog query is answered from the caller\'s mirror', async ({ target }) => {
  const client = pgClient(target, ANALYST_TOKEN);
  await client.connect();
  try {
    assert.is((await client.query('SET extra_float_digits = 3')).command, 'SET');
    await client.query("SET application_name = 'door test'");
    assert.equal((await client.query('SHOW application_name')).rows, [{ application_name: 'door test' }]);
    assert.equal((await client.query('show server_version_num')).rows, [{ server_version_num: '150000' }]);
    assert.is((await client.query('BEGIN')).command, 'BEGIN');
    assert.equal((await client.query('select count(*)::int as n from sales.orders where id <= $1', [3])).rows, [{ n: 3 }]);
    assert.is((await client.query('COMMIT')).command, 'COMMIT');
    const unknown = await client.query('show no_such_setting').then(() => undefined, (error: { code?: string }) => error);
    assert.is(unknown?.code, '42704');
    const catalog = await client.query("select c.relname from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relkind = 'r' order by 1", ['sales']);
    assert.equal(catalog.rows.map((row) => row.relname), ['customers', 'order_lines', 'orders', 'products']);
    const columns = await client.query("select a.attname from pg_catalog.pg_attribute a where a.attrelid = 'sales.customers'::regclass and a.attnum > 0 order by a.attnum");
    const names = columns.rows.map((row) => row.attname as string);
    assert.ok(names.includes('id') && !names.includes('email'), `the analyst's mirror has no email column: ${names.join(', ')}`);
    assert.equal((await client.query('select 1 as one')).rows, [{ one: 1 }]);
  } finally {
    await client.end();
  }
});

test('writes stay refused (25006) for the clerk while sql.allowWrites is off', async ({ target }) => {
  const client = pgClient(target, ADMIN_TOKEN);
  await client.connect();
  try {
    const refused = await client.query('delete from sales.order_lines where order_id = $1', [1]).then(() => undefined, (error: { code?: string }) => error);
    assert.is(refused?.code, '25006');
  } finally {
    await client.end();
  }
});

const missingPsql = psqlMissing();
(missingPsql ? test.skip : test)(`psql: a denial by the analyzer keeps psql's exit code 1 and the SQLSTATE${missingPsql ? ` (${missingPsql})` : ''}`, async ({ target }) => {
  const denied = await psql(target, ANALYST_TOKEN, ['select email from sales.customers']);
  assert.is(denied.code, 1);
  assert.match(denied.stderr, /42501/);
});

test.run();

/** With sql.allowWrites, statements write where the grants allow; a connection idle past sql.idleTimeoutMs is closed (57P05). */
const writes = suite<{ service: TestService; target: DoorTarget }>('the SQL front door with sql.allowWrites and a short idle timeout');

writes.before(async (context) => {
  context.service = await startTestService({
    config: demoConfig({ sql: { enabled: true, port: 0, allowWrites: true, idleTimeoutMs: 1500 } }),
    datasources: { retail_db: await sharedPglite() },
  });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'retail@1' };
});

writes.after(async ({ service }) => {
  await service?.close();
});

writes('the clerk writes, the analyst is refused the write (42501), a write inside BEGIN is refused (0A000)', async ({ target }) => {
  const clerk = pgClient(target, ADMIN_TOKEN);
  const analyst = pgClient(target, ANALYST_TOKEN);
  await Promise.all([clerk.connect(), analyst.connect()]);
  try {
    const before = (await clerk.query('select stock from sales.products where id = $1', [3])).rows[0]?.stock as number;
    const updated = await clerk.query('update sales.products set stock = stock + 1 where id = $1', [3]);
    assert.is(updated.command, 'UPDATE');
    assert.is(updated.rowCount, 1);
    assert.equal((await clerk.query('select stock from sales.products where id = $1', [3])).rows, [{ stock: before + 1 }]);
    const refused = await analyst.query('update sales.products set stock = 0 where id = $1', [3]).then(() => undefined, (error: { code?: string }) => error);
    assert.is(refused?.code, '42501');
    await clerk.query('BEGIN');
    const inBlock = await clerk.query('update sales.products set stock = stock - 1 where id = $1', [3]).then(() => undefined, (error: { code?: string }) => error);
    assert.is(inBlock?.code, '0A000');
    // the failed block answers 25P02 until it ends, as PostgreSQL does
    const aborted = await clerk.query('select 1').then(() => undefined, (error: { code?: string }) => error);
    assert.is(aborted?.code, '25P02');
    assert.is((await clerk.query('ROLLBACK')).command, 'ROLLBACK');
    await clerk.query('update sales.products set stock = stock - 1 where id = $1', [3]);
    assert.equal((await clerk.query('select stock from sales.products where id = $1', [3])).rows, [{ stock: before }]);
  } finally {
    await Promise.all([clerk.end(), analyst.end()].map((ending) => ending.catch(() => undefined)));
  }
});

writes('a connection idle past sql.idleTimeoutMs is closed with 57P05', async ({ target }) => {
  const client = pgClient(target, ANALYST_TOKEN);
  const closed = new Promise<{ code?: string }>((resolve) => client.on('error', (error) => resolve(error as { code?: string })));
  await client.connect();
  const error = await closed;
  assert.is(error.code, '57P05');
  await client.end().catch(() => undefined);
});

writes.run();

/**
 * Cancelling on PGlite ends its worker and reopens the database from the state kept after startup, so this
 * runs on a PGlite the service opens itself (as in production), not on the process's shared one, whose kept
 * state predates the roles later suites sync.
 */
const cancels = suite<{ service: TestService; target: DoorTarget }>('the SQL front door: a CancelRequest');

cancels.before(async (context) => {
  context.service = await startTestService({ config: demoConfig({ sql: { enabled: true, port: 0 } }), datasources: {} });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'retail@1' };
});

cancels.after(async ({ service }) => {
  await service?.close();
});

cancels('a CancelRequest cancels the running statement (57014) and the connection serves the next one', async ({ target }) => {
  const client = pgClient(target, ANALYST_TOKEN);
  await client.connect();
  try {
    const outcome = await cancelUntilEnded(target, ANALYST_TOKEN, client, 'select count(*) from generate_series(1, 2000000000)');
    assert.is((outcome as { code?: string }).code, '57014');
    assert.match((outcome as Error).message, /user request/);
    assert.equal((await client.query('select count(*)::int as n from sales.products')).rows, [{ n: 30 }]);
  } finally {
    await client.end();
  }
});

cancels.run();

/** With sql.tls, a client that asks for TLS gets it; a handshake that is not TLS closes its connection only. */
const tls = suite<{ service: TestService; target: DoorTarget }>('the SQL front door over TLS');
const missingOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return psqlMissing();
  } catch {
    return 'openssl is not installed';
  }
})();

tls.before(async (context) => {
  if (missingOpenssl) return;
  const folder = mkdtempSync(join(tmpdir(), 'vdb-door-tls-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(folder, 'key.pem'), '-out', join(folder, 'cert.pem'), '-days', '1', '-subj', '/CN=localhost'], { stdio: 'ignore' });
  context.service = await startTestService({
    config: demoConfig({ sql: { enabled: true, port: 0, tls: { cert: join(folder, 'cert.pem'), key: join(folder, 'key.pem') } } }),
  });
  context.target = { port: (context.service.sqlAddress as { port: number }).port, database: 'retail@1' };
});

tls.after(async ({ service }) => {
  await service?.close();
});

(missingOpenssl ? tls.skip : tls)(`psql with sslmode=require is served; a client that sends no TLS handshake after SSLRequest is disconnected, the door serves on${missingOpenssl ? ` (${missingOpenssl})` : ''}`, async ({ target }) => {
  const secure = await psql(target, ANALYST_TOKEN, ['select count(*) from sales.products'], 'tester', { PGSSLMODE: 'require' });
  assert.is(secure.stdout, '30\n', secure.stderr);
  const answer = await new Promise<Buffer>((resolve) => {
    const socket = connect(target.port, '127.0.0.1', () => {
      const request = Buffer.alloc(8);
      request.writeInt32BE(8);
      request.writeInt32BE(80877103, 4); // SSLRequest
      socket.write(request);
    });
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // 'S': go ahead with TLS; what follows is not a ClientHello
      socket.write('this is not a TLS handshake'.repeat(10));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(received));
  });
  assert.is(answer.toString(), 'S');
  const after = await psql(target, ANALYST_TOKEN, ['select 1'], 'tester', { PGSSLMODE: 'require' });
  assert.is(after.stdout, '1\n', after.stderr);
});

tls.run();
