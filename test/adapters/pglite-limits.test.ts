import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PgliteDialect } from '../../adapters/pglite/pglite-dialect.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';
import { startTestService } from '../support/test-service.js';

const retailSeed = fileURLToPath(new URL('../../../descriptors/seed/retail.sql', import.meta.url));
/** Runs for minutes on PGlite: only its limit ends it. */
const RUNAWAY = 'select count(*) from generate_series(1, 10000000000)';
const RECURSIVE_RUNAWAY = 'with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r';
const ORDERS = 'select count(*)::integer as n from sales.orders';

const test = suite<{ baseDir: string; datasource: Datasource }>('pglite: every statement bounded, off the event loop', {
  baseDir: '',
  datasource: undefined as unknown as Datasource,
});

test.before(async (context) => {
  context.baseDir = mkdtempSync(join(tmpdir(), 'vdb-pglite-limits-'));
  context.datasource = runtimeOver(await new PgliteDialect('pglite').open({
    name: 'retail_db', adapter: 'pglite', connection: { dataDir: 'data' }, pool: {}, init: [retailSeed], baseDir: context.baseDir,
  }));
});

test.after(async ({ baseDir, datasource }) => {
  await datasource?.close();
  if (baseDir) rmSync(baseDir, { recursive: true, force: true });
});

const failureOf = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as { code?: unknown; message?: unknown });

test('health answers while a runaway statement runs; the runaway fails with 57014 and the database serves the next query', async ({ datasource }) => {
  const service = await startTestService({ datasources: { retail_db: datasource } });
  try {
    const health = async () => {
      const started = performance.now();
      const response = await service.request('/observe/health', { token: null });
      await response.arrayBuffer();
      return { status: response.status, ms: Math.round(performance.now() - started) };
    };
    const before = await health();
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const runaway = failureOf(datasource.query(RUNAWAY, [], { timeoutMs: 3_000 }));
    // queued behind the runaway: it runs on the reopened worker
    const queued = datasource.query(ORDERS, []);
    await new Promise((done) => setTimeout(done, 300));
    const during: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const answer = await health();
      assert.is(answer.status, 200);
      during.push(answer.ms);
      await new Promise((done) => setTimeout(done, 200));
    }
    delay.disable();
    // measured, not asserted: timings depend on the machine
    console.log(`health before the runaway: ${before.ms} ms; during it: ${during.join(', ')} ms; event loop delay max ${Math.round(delay.max / 1e6)} ms`);

    const failure = await runaway;
    assert.is(failure?.code, '57014');
    assert.match(String(failure?.message), 'canceling statement due to statement timeout');
    assert.equal((await queued).rows, [{ n: 150 }]);
    assert.equal((await datasource.query(ORDERS, [])).rows, [{ n: 150 }]);
  } finally {
    await service.close();
  }
});

test('an aborted signal cancels the running statement with 57014; a call whose signal ended before its turn never runs', async ({ datasource }) => {
  const controller = new AbortController();
  const running = failureOf(datasource.query(RECURSIVE_RUNAWAY, [], { signal: controller.signal }));
  const queued = failureOf(datasource.query(ORDERS, [], { signal: AbortSignal.abort() }));
  await new Promise((done) => setTimeout(done, 300));
  controller.abort();
  const failure = await running;
  assert.is(failure?.code, '57014');
  assert.match(String(failure?.message), 'canceling statement due to user request');
  assert.is((await queued)?.code, '57014');
  assert.equal((await datasource.query(ORDERS, [])).rows, [{ n: 150 }]);
});

test('a statement whose request ends but that finishes within the grace answers as it would have, and leaves the worker as it is: an in-memory write survives', async ({ baseDir }) => {
  const memory = runtimeOver(await new PgliteDialect('pglite').open({
    name: 'memory_db', adapter: 'pglite', connection: {}, pool: {}, init: [retailSeed], baseDir,
  }));
  try {
    // written after the snapshot: a reopened worker would start without it
    await memory.query('insert into sales.customers (email, name, region) values (?, ?, ?)', ['grace@example.com', 'Grace', 'EU']);
    const controller = new AbortController();
    const running = memory.query("select 'slept' as outcome from pg_sleep(0.1)", [], { signal: controller.signal });
    await new Promise((done) => setTimeout(done, 20));
    controller.abort();
    assert.equal((await running).rows, [{ outcome: 'slept' }]);
    assert.equal((await memory.query('select count(*)::integer as n from sales.customers where email = ?', ['grace@example.com'])).rows, [{ n: 1 }]);
  } finally {
    await memory.close();
  }
});

test('a transaction whose statement runs over its limit ends with it: its later statements fail and nothing commits', async ({ datasource }) => {
  const email = 'limits@example.com';
  const steps: unknown[] = [];
  const failure = await failureOf(datasource.transaction(async (transaction) => {
    await transaction.query('insert into sales.customers (email, name, region) values (?, ?, ?)', [email, 'Limits', 'EU']);
    steps.push((await failureOf(transaction.query(RUNAWAY, [], { timeoutMs: 500 })))?.code);
    steps.push((await failureOf(transaction.query('select 1', [])))?.code);
  }));
  assert.equal(steps, ['57014', '25P02']);
  assert.is(failure?.code, '25P02');
  assert.equal((await datasource.query('select count(*)::integer as n from sales.customers where email = ?', [email])).rows, [{ n: 0 }]);
});

test('a statement within its limit runs as before; values keep their types', async ({ datasource }) => {
  const result = await datasource.query('select ?::integer as n, ?::text as s, true as b, ?::bytea as bytes, \'{"a":1}\'::jsonb as j', [7, 'x', Buffer.from('hi')], { timeoutMs: 5_000 });
  assert.equal(result.rows, [{ n: 7, s: 'x', b: true, bytes: 'aGk=', j: { a: 1 } }]);
});

test.run();
