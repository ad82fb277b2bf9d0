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

/** How a call ended: 'ok', or its SQLSTATE. */
const outcome = (call: Promise<unknown>): Promise<string> => call.then(() => 'ok', (error: unknown) => String((error as { code?: unknown }).code));
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** A runaway's outcome and whether it has ended yet: what the others' answers are ordered against (no clock is asserted). */
function tracked(call: Promise<unknown>): { outcome: Promise<string>; ended: () => boolean } {
  let ended = false;
  const done = outcome(call).finally(() => (ended = true));
  return { outcome: done, ended: () => ended };
}

// first, while the spare is ready: a reopen before the next spare is ready waits for it (docs/configuration.md)
test('another caller\'s statement is answered while a runaway still runs (a turn, not its whole limit), and the runaway still ends at its own limit', async ({ datasource }) => {
  const runaway = tracked(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 3_000 }));
  await sleep(100);
  const other = await outcome(datasource.query('select count(*) as n from shop.items', [], { ...admin, timeoutMs: 10_000 }));
  assert.is(other, 'ok');
  // a turn (500 ms), the worker's end and the statement on the spare; without turns, after the runaway's whole limit
  assert.is(runaway.ended(), false, 'the other caller was answered only once the runaway had ended');
  assert.is(await runaway.outcome, '57014');
});

test('a statement sent behind a runaway of its own caller answers 57014 at its own limit, counted from its call: before the runaway ends', async ({ datasource }) => {
  const runaway = tracked(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 4_000 }));
  await sleep(50);
  const behind = await outcome(datasource.query('select 1 as one', [], { ...analyst, timeoutMs: 800 }));
  assert.is(behind, '57014');
  assert.is(runaway.ended(), false, 'the statement behind ended only once the runaway had');
  assert.is(await runaway.outcome, '57014');
});

test('statements cut off by two runaways ending one after the other run on the next worker: rows, never an error without a code', async ({ datasource }) => {
  const first = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 1_000 }));
  const second = outcome(datasource.query(RUNAWAY, [], { ...analyst, timeoutMs: 2_500 }));
  const behind = [1, 2].map(() => datasource.query('select count(*)::integer as n from shop.items', [], { ...analyst, timeoutMs: 30_000 }));
  assert.is(await first, '57014');
  assert.is(await second, '57014');
  for (const result of await Promise.all(behind)) assert.equal(result.rows, [{ n: 400 }]);
});

test.run();
