import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';

// test-lane: soak (time limits and turns on one PGlite worker, awaited within bounds: one such suite at a time, see scripts/run-tests.mjs)

/**
 * Turns on the single PGlite worker (adapters/pglite/pglite-host.ts): time limits counted from the call, a
 * caller's runaway ended for another caller's turn, statements cut off by another's end queued again.
 */
const SEED = `create schema shop;
create table shop.items (id integer primary key, name text not null);
insert into shop.items select i, 'item ' || i from generate_series(1, 400) as i;
`;
/** Four copies of 400 rows crossed: far past any limit here. */
const RUNAWAY = 'select count(*) as n from shop.items a, shop.items b, shop.items c, shop.items d';
const ROLES = ['vdb_turns_analyst', 'vdb_turns_admin'] as const;
const analyst = { scope: { role: ROLES[0], readOnly: true } };
const admin = { scope: { role: ROLES[1], readOnly: true } };

const test = suite<{ baseDir: string; datasource: Datasource }>('pglite: callers take turns on the worker', {
  baseDir: '',
  datasource: undefined as unknown as Datasource,
});

test.before(async (context) => {
  context.baseDir = mkdtempSync(join(tmpdir(), 'vdb-pglite-turns-'));
  const seed = join(context.baseDir, 'seed.sql');
  writeFileSync(seed, SEED);
  const datasource = await new PgliteDialect('pglite').open({
    name: 'turns_db', adapter: 'pglite', connection: {}, pool: {}, init: [seed], baseDir: context.baseDir,
  });
  context.datasource = datasource;
  for (const role of ROLES) {
    await datasource.query(`create role ${role}`, []);
    await datasource.query(`grant usage on schema shop to ${role}`, []);
    await datasource.query(`grant select on shop.items to ${role}`, []);
  }
  // as the service does once its roles are synced: in memory, a spare worker is ready from then on
  await datasource.restrictSession?.([...ROLES]);
});

test.after(async ({ baseDir, datasource }) => {
  await datasource?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

interface Outcome {
  code: string;
  ms: number;
}

/** How a call ended ('ok', or its SQLSTATE) and how long after `from` it did. */
const outcome = (call: Promise<unknown>, from = Date.now()): Promise<Outcome> => call.then(
  () => ({ code: 'ok', ms: Date.now() - from }),
  (error: unknown) => ({ code: String((error as { code?: unknown }).code), ms: Date.now() - from }),
);
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

// first, while the spare is ready: a reopen before the next spare is ready waits for it (docs/configuration.md)
test('another caller\'s statement waits about a turn behind a runaway, which is ended, runs again, and still ends at its own limit', async ({ datasource }) => {
  const runaway = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 3_000 }));
  await sleep(100);
  const other = await outcome(datasource.query('select count(*) as n from shop.items', [], { ...admin, timeoutMs: 10_000 }));
  assert.is(other.code, 'ok');
  // a turn (500 ms), the worker's end and the statement on the spare; without turns, the runaway's whole limit and a reopen
  assert.ok(other.ms < 3_000, `the other caller answered after ${other.ms} ms`);
  const ended = await runaway;
  assert.is(ended.code, '57014');
  assert.ok(ended.ms < 3_000 + 2_000, `the runaway ended after ${ended.ms} ms`);
});

test('a statement sent behind a runaway of its own caller answers 57014 at its own limit, counted from its call', async ({ datasource }) => {
  const runaway = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 4_000 }));
  await sleep(50);
  const behind = await outcome(datasource.query('select 1 as one', [], { ...analyst, timeoutMs: 800 }));
  assert.is(behind.code, '57014');
  assert.ok(behind.ms < 800 + 700, `answered after ${behind.ms} ms`);
  assert.is((await runaway).code, '57014');
});

test('statements cut off by two runaways ending one after the other run on the next worker: rows, never an error without a code', async ({ datasource }) => {
  const first = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 1_000 }));
  const second = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 2_500 }));
  const behind = [1, 2].map(() => datasource.query('select count(*)::integer as n from shop.items', [], { ...analyst, timeoutMs: 30_000 }));
  assert.is((await first).code, '57014');
  assert.is((await second).code, '57014');
  for (const result of await Promise.all(behind)) assert.equal(result.rows, [{ n: 400 }]);
});

test.run();
