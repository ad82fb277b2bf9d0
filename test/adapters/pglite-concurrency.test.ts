import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';

const retailSeed = fileURLToPath(new URL('../../../descriptors/seed/retail.sql', import.meta.url));
const ROLES = ['vdb_concurrency_a', 'vdb_concurrency_b', 'vdb_concurrency_c'];

const test = suite<{ datasource: Datasource }>('pglite: one session, many callers', { datasource: undefined as unknown as Datasource });

test.before(async (context) => {
  context.datasource = await new PgliteDialect('pglite').open({
    name: 'concurrency_db', adapter: 'pglite', connection: {}, pool: {}, init: [retailSeed], baseDir: process.cwd(),
  });
  for (const role of ROLES) {
    await context.datasource.query(`create role ${role}`, []);
    await context.datasource.query(`grant usage on schema sales to ${role}`, []);
  }
  await context.datasource.query(`grant select on sales.customers to ${ROLES[0]}`, []);
});

test.after(async ({ datasource }) => {
  await datasource?.close();
});

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test('a transaction holds the session: a statement sent meanwhile runs after it, and never sees its uncommitted rows', async ({ datasource }) => {
  const order: string[] = [];
  const transaction = datasource.transaction(async (executor) => {
    await executor.query('insert into sales.customers (email, name, region) values (?, ?, ?)', ['uncommitted@example.com', 'U', 'EU']);
    await sleep(150);
    order.push('transaction');
    throw new Error('rolled back');
  }).catch((error: Error) => error.message);
  await sleep(30);
  const outside = datasource.query('select count(*)::integer as n from sales.customers where email = ?', ['uncommitted@example.com'])
    .then((result) => {
      order.push('outside');
      return result.rows;
    });
  assert.equal(await outside, [{ n: 0 }]);
  assert.is(await transaction, 'rolled back');
  assert.equal(order, ['transaction', 'outside']);
});

test('a caller scope sent during a transaction does not become the transaction\'s role', async ({ datasource }) => {
  const roles = await datasource.transaction(async (executor) => {
    const before = (await executor.query('select current_user as role', [])).rows;
    const scoped = datasource.query('select current_user as role', [], { scope: { role: ROLES[1] as string, readOnly: true } });
    await sleep(30);
    const after = (await executor.query('select current_user as role', [])).rows;
    return { before, after, scoped };
  });
  assert.equal(roles.after, roles.before);
  assert.equal((await roles.scoped).rows, [{ role: ROLES[1] }]);
});

test('statements of many callers at once each run as their own role, with their own grants', async ({ datasource }) => {
  const calls = Array.from({ length: 60 }, (_, index) => {
    const role = ROLES[index % ROLES.length] as string;
    const sql = index % 2 === 0 ? 'select current_user as role' : 'select count(*)::integer as n from sales.customers';
    return datasource.query(sql, [], { scope: { role, readOnly: true } }).then(
      (result) => ({ role, sql, rows: result.rows as unknown[] }),
      (error: { code?: string }) => ({ role, sql, code: error.code }),
    );
  });
  for (const outcome of await Promise.all(calls)) {
    if (outcome.sql.startsWith('select current_user')) assert.equal(outcome, { ...outcome, rows: [{ role: outcome.role }] });
    else if (outcome.role === ROLES[0]) assert.ok('rows' in outcome, `${outcome.role} reads sales.customers`);
    else assert.equal(outcome, { ...outcome, code: '42501' });
  }
});

test('a caller\'s read-only scope refuses its write while others run beside it', async ({ datasource }) => {
  const write = datasource.query('insert into sales.customers (email, name, region) values (?, ?, ?)', ['ro@example.com', 'R', 'EU'], { scope: { role: ROLES[0] as string, readOnly: true } })
    .then(() => 'written', (error: { code?: string }) => error.code);
  const reads = Array.from({ length: 10 }, () => datasource.query('select 1 as one', [], { scope: { role: ROLES[2] as string, readOnly: true } }));
  assert.is(await write, '25006');
  for (const read of await Promise.all(reads)) assert.equal(read.rows, [{ one: 1 }]);
});

test.run();
