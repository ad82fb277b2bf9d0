import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';

const SEED = `create schema shop;
create table shop.items (id integer primary key, name text not null, secret text);
insert into shop.items values (1, 'tea', 's1'), (2, 'cake', 's2');
create table shop.audit (note text);
`;
const WHO = 'select current_user as current, session_user as session, (select rolsuper from pg_roles where rolname = session_user) as superuser';
const RUNAWAY = 'select count(*) from generate_series(1, 10000000000)';

const test = suite<{ baseDir: string; datasource: Datasource }>('pglite: restrictSession reopens as a non-superuser login', {
  baseDir: '',
  datasource: undefined as unknown as Datasource,
});

test.before(async (context) => {
  context.baseDir = mkdtempSync(join(tmpdir(), 'vdb-pglite-session-'));
  const seed = join(context.baseDir, 'seed.sql');
  writeFileSync(seed, SEED);
  // in memory: a reopen starts from the snapshot taken at open, and again at restrictSession
  context.datasource = runtimeOver(await new PgliteDialect('pglite').open({
    name: 'shop_db', adapter: 'pglite', connection: {}, pool: {}, init: [seed], baseDir: context.baseDir,
  }));
});

test.after(async ({ baseDir, datasource }) => {
  await datasource?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

const codeOf = (promise: Promise<unknown>) => promise.then(() => 'ok', (error: unknown) => (error as { code?: unknown }).code);

test('restricted, the session user is vdb_authenticator; SET ROLE reaches only granted roles, and PGlite enforces their privileges', async ({ datasource }) => {
  const rows = async (sql: string) => (await datasource.query(sql, [])).rows;
  // nobody restricted it yet: the superuser session of today
  assert.equal(await rows(WHO), [{ current: 'postgres', session: 'postgres', superuser: true }]);
  for (const statement of [
    'create role vdb_test_reader nologin',
    'create role vdb_test_writer nologin',
    'grant usage on schema shop to vdb_test_reader, vdb_test_writer',
    'grant select (id, name) on shop.items to vdb_test_reader',
    'grant select, insert on shop.audit to vdb_test_writer',
  ]) await datasource.query(statement, []);

  assert.ok(datasource.restrictSession, 'the pglite datasource restricts its session');
  await datasource.restrictSession(['vdb_test_reader', 'vdb_test_writer']);
  assert.equal(await rows(WHO), [{ current: 'vdb_authenticator', session: 'vdb_authenticator', superuser: false }]);

  await datasource.query('set role vdb_test_reader', []);
  assert.equal(await rows('select id, name from shop.items order by id'), [{ id: 1, name: 'tea' }, { id: 2, name: 'cake' }]);
  assert.is(await codeOf(datasource.query('select secret from shop.items', [])), '42501');
  assert.is(await codeOf(datasource.query('insert into shop.audit values (?)', ['x'])), '42501');

  await datasource.query('reset role', []);
  assert.equal(await rows(WHO), [{ current: 'vdb_authenticator', session: 'vdb_authenticator', superuser: false }]);
  assert.is(await codeOf(datasource.query('select id from shop.items', [])), '42501');
  assert.is(await codeOf(datasource.query('set role postgres', [])), '42501');
  assert.is(await codeOf(datasource.query('create role vdb_test_intruder', [])), '42501');
});

test('a caller\'s statement runs in its scope, the session set to it; statements and transactions without one start from the login', async ({ datasource }) => {
  const reader = { role: 'vdb_test_reader', readOnly: true };
  const writer = { role: 'vdb_test_writer', readOnly: false };
  const rows = async (sql: string, scope?: { role: string; readOnly: boolean }) => (await datasource.query(sql, [], scope && { scope })).rows;
  const mode = "select current_user as current, current_setting('transaction_read_only') as ro";
  assert.equal(await rows(mode, reader), [{ current: 'vdb_test_reader', ro: 'on' }]);
  assert.equal(await rows('select id, name from shop.items order by id', reader), [{ id: 1, name: 'tea' }, { id: 2, name: 'cake' }]);
  assert.is(await codeOf(datasource.query('select secret from shop.items', [], { scope: reader })), '42501');
  assert.is(await codeOf(datasource.query('insert into shop.audit values (?)', ['x'], { scope: { role: 'vdb_test_writer', readOnly: true } })), '25006');
  assert.equal(await rows(mode), [{ current: 'vdb_authenticator', ro: 'off' }]);
  // a read-write transaction right after a read-only scope begins as the login and sets its own role
  await rows(mode, reader);
  const inside = await datasource.transaction(async (transaction) => {
    await transaction.query('insert into shop.audit values (?)', ['y']);
    return (await transaction.query(mode, [])).rows;
  }, { scope: writer });
  assert.equal(inside, [{ current: 'vdb_test_writer', ro: 'off' }]);
  assert.equal(await rows('select count(*)::integer as n from shop.audit', writer), [{ n: 1 }]);
  assert.equal(await rows(mode), [{ current: 'vdb_authenticator', ro: 'off' }]);
});

test('a caller\'s statement that changes its session with set_config cannot hand its role or mode to the next caller', async ({ datasource }) => {
  const reader = { role: 'vdb_test_reader', readOnly: true };
  const writer = { role: 'vdb_test_writer', readOnly: false };
  const mode = "select current_user as current, current_setting('transaction_read_only') as ro";
  const audited = async () => (await datasource.query('select count(*)::integer as n from shop.audit', [], { scope: writer })).rows[0]?.['n'];
  const before = await audited();
  // the login may SET ROLE to every role it was granted: a reader's statement can become the writer, for itself
  const escaped = await datasource.query(
    "select pg_catalog.set_config('role', 'vdb_test_writer', false) as r, pg_catalog.set_config('default_transaction_read_only', 'off', false) as d", [], { scope: reader });
  assert.equal(escaped.rows, [{ r: 'vdb_test_writer', d: 'off' }]);
  // the next caller's statement runs in its own scope again, in the same exchange as the scope
  assert.equal((await datasource.query(mode, [], { scope: reader })).rows, [{ current: 'vdb_test_reader', ro: 'on' }]);
  assert.is(await codeOf(datasource.query('insert into shop.audit values (?)', ['escaped'], { scope: reader })), '25006');
  assert.is(await codeOf(datasource.query('insert into shop.audit values (?)', ['escaped'], { scope: { role: 'vdb_test_reader', readOnly: false } })), '42501');
  // a statement that fails rolls its own set_config back; the next runs in its scope either way
  assert.is(await codeOf(datasource.query("select pg_catalog.set_config('role', 'vdb_test_writer', false), 1 / 0", [], { scope: reader })), '22012');
  assert.equal((await datasource.query(mode, [], { scope: reader })).rows, [{ current: 'vdb_test_reader', ro: 'on' }]);
  // a scope the session may not enter: the statement after it in the exchange does not run
  assert.is(await codeOf(datasource.query('insert into shop.audit values (?)', ['unscoped'], { scope: { role: 'postgres', readOnly: false } })), '42501');
  assert.is(await audited(), before);
  // the service's own statements start from the login
  await datasource.query("select pg_catalog.set_config('role', 'vdb_test_writer', false)", [], { scope: reader });
  assert.equal((await datasource.query(mode, [])).rows, [{ current: 'vdb_authenticator', ro: 'off' }]);
});

test('planEachRun: a caller\'s statement prepared for its run only, closed after it, never kept', async ({ datasource }) => {
  const reader = { role: 'vdb_test_reader', readOnly: true };
  const sql = 'select count(*)::integer as n from unnest(?::int[]) as shipped(id) join shop.items i on i.id = shipped.id';
  const texts = async () => (await datasource.query('select count(*)::integer as n from pg_catalog.pg_prepared_statements where statement like ?', ['%as shipped(id)%'])).rows;
  for (let run = 0; run < 7; run++) assert.equal((await datasource.query(sql, [[1, 2, 99]], { scope: reader, planEachRun: true })).rows, [{ n: 2 }]);
  // the last run's is closed with the caller's next exchange
  await datasource.query('select name from shop.items where id = ?', [1], { scope: reader });
  assert.equal(await texts(), [{ n: 0 }], 'none kept');
  await datasource.query(sql, [[1]], { scope: reader });
  assert.equal(await texts(), [{ n: 1 }], 'the same text without it is kept');
});

test('kept statements: one a caller\'s statement deallocates, or whose name it takes, is prepared again; PREPARE or DEALLOCATE from a caller drops them all', async ({ datasource }) => {
  const reader = { role: 'vdb_test_reader', readOnly: true };
  const lookup = 'select name from shop.items where id = ?';
  const kept = async () => (await datasource.query('select name from pg_catalog.pg_prepared_statements order by name', [])).rows.map((row) => String(row['name']));
  const fromSql = async () => (await datasource.query('select count(*)::integer as n from pg_catalog.pg_prepared_statements where from_sql', [])).rows[0]?.['n'];
  assert.equal((await datasource.query(lookup, [1], { scope: reader })).rows, [{ name: 'tea' }]);
  assert.ok((await kept()).length > 0, 'the caller\'s text is kept as a prepared statement');
  // gone behind the worker's back: the Bind fails (26000), the worker forgets its names and prepares again
  await datasource.query('deallocate all', []);
  assert.equal((await datasource.query(lookup, [2], { scope: reader })).rows, [{ name: 'cake' }]);
  // the name the next text would take is taken (42P05): the same
  const next = `vdb_caller_${Math.max(...(await kept()).map((name) => Number(name.replace('vdb_caller_', '')))) + 1}`;
  await datasource.query(`prepare ${next} as select 'swapped' as name`, []);
  assert.equal((await datasource.query('select name from shop.items where id = ? and id > 0', [1], { scope: reader })).rows, [{ name: 'tea' }]);
  // a caller's own PREPARE: every kept statement is deallocated, the caller's with them
  await datasource.query('prepare mine as select 1', [], { scope: reader });
  assert.equal(await kept(), []);
  assert.is(await fromSql(), 0);
  assert.equal((await datasource.query(lookup, [2], { scope: reader })).rows, [{ name: 'cake' }]);
});

test('a reopen after a runaway opens as vdb_authenticator again, from the snapshot taken at restrictSession', async ({ datasource }) => {
  await datasource.query('set role vdb_test_writer', []);
  await datasource.query('insert into shop.audit values (?)', ['written after the snapshot']);
  assert.is(await codeOf(datasource.query(RUNAWAY, [], { timeoutMs: 1_000 })), '57014');
  assert.equal((await datasource.query(WHO, [])).rows, [{ current: 'vdb_authenticator', session: 'vdb_authenticator', superuser: false }]);
  await datasource.query('set role vdb_test_writer', []);
  // in memory, what was written since the snapshot is gone; roles and grants were in it
  assert.equal((await datasource.query('select count(*)::integer as n from shop.audit', [])).rows, [{ n: 0 }]);
  await datasource.query('reset role', []);
});

test('restricting again revokes the memberships no longer listed; a list reaching a superuser is refused and the session stays restricted', async ({ datasource }) => {
  await datasource.restrictSession?.(['vdb_test_reader']);
  assert.is(await codeOf(datasource.query('set role vdb_test_writer', [])), '42501');
  assert.is(await codeOf(datasource.query('set role vdb_test_reader', [])), 'ok');
  await datasource.query('reset role', []);

  const refused = await datasource.restrictSession?.(['postgres']).then(() => undefined, (error: unknown) => error);
  assert.instance(refused, Error);
  assert.equal((await datasource.query(WHO, [])).rows, [{ current: 'vdb_authenticator', session: 'vdb_authenticator', superuser: false }]);
  assert.is(await codeOf(datasource.query('set role vdb_test_reader', [])), 'ok');
  await datasource.query('reset role', []);
});

test.run();
