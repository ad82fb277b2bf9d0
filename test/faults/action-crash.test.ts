// test-lane: soak
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { forEachBackend, skippedHere, type Backend } from '../support/backends.js';
import { pause, removeDir, ServiceProcess } from '../support/fault-servers.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { actionBundle, call, crashTables, NEW_QTY, OLD_QTY, settledRuns, stateOf } from './action-bundle.js';

/**
 * The service as its own process, killed with SIGKILL at every boundary of a three-operation action and
 * started again each time: once recovery is done, the data is exactly as before the action or as the
 * completed action left it (docs/actions.md#recovery). 16 kill points over the three backends by default, so
 * that the suite keeps its time (a restart takes 12-50 s); `VDB_TEST_ACTION_KILLS=100` is the full run. Where a
 * server's URL is not set, its share is not run.
 */

type KillPoint = 'random' | 'random_failing' | 'in_reserve' | 'in_order' | 'in_wait' | 'in_ship' | 'in_compensation';

/** Where a database the test reaches itself lets it hold a lock, the kill lands at a known statement. */
const LOCKED_POINTS: readonly KillPoint[] = ['in_reserve', 'in_order', 'in_wait', 'in_ship', 'in_compensation'];
const TIMED_POINTS: readonly KillPoint[] = ['random', 'random_failing', 'in_wait'];

const TOTAL = Number(process.env['VDB_TEST_ACTION_KILLS'] ?? 16);
/** A tenth on PGlite, whose restart (a cold start of the embedded database) takes longest; the rest on the servers. */
const PGLITE = Math.max(3, Math.round(TOTAL / 10));
const SHARE: Record<Backend['name'], number> = { pglite: PGLITE, postgres: Math.ceil((TOTAL - PGLITE) / 2), mysql: TOTAL - PGLITE - Math.ceil((TOTAL - PGLITE) / 2) };

/** A lock the test holds in the database until `release`: the action blocks at the statement that needs it. */
interface Held {
  release(): Promise<void>;
}

function hold(raw: Datasource, statements: { sql: string; bindings: unknown[] }[], commit: boolean): Promise<Held> {
  let release: () => void = () => undefined;
  const released = new Promise<void>((done) => {
    release = done;
  });
  return new Promise<Held>((holding, failed) => {
    const ended = raw.transaction(async (transaction) => {
      for (const statement of statements) await transaction.query(statement.sql, statement.bindings);
      holding({ release: async () => {
        release();
        await ended.catch(() => undefined);
      } });
      await released;
      if (!commit) throw new Error('rolled back by the test');
    });
    ended.catch(failed);
  });
}

/** The journal's unfinished steps, read as the database's superuser (the test's own connection). */
async function openSteps(raw: Datasource): Promise<{ position: number; compensation_status: string }[]> {
  const result = await raw.query(`select s.position, s.compensation_status from vdb_service.action_steps s
where s.run_id in (select r.run_id from vdb_service.action_runs r where r.state in ('running', 'compensating'))`, []);
  return result.rows.map((row) => ({ position: Number(row['position']), compensation_status: String(row['compensation_status']) }));
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await pause(50);
  }
}

forEachBackend((backend) => {
  const test = suite(`${backend.name}: an action killed with SIGKILL at each boundary, then restarted, ends before or after, never between`);
  if (skippedHere(test, backend)) return;
  const schema = backend.family === 'mysql' ? backend.database : 'crash';
  let raw: Datasource | undefined;
  let dir = '';
  let configFile = '';

  test.before(async () => {
    const tables = crashTables(backend.family, schema);
    if (backend.name === 'pglite') {
      ({ configFile, dir } = actionBundle({ adapter: 'pglite', connection: { dataDir: 'data' } }, schema, 'crash-1', tables));
      mkdirSync(join(dir, 'data'), { recursive: true });
    } else {
      raw = await backend.open('crash_probe');
      for (const statement of tables) await raw.query(statement, []);
      ({ configFile, dir } = actionBundle(backend.datasourceConfig, schema, 'crash-1'));
    }
  });

  test.after(async () => {
    if (raw) {
      for (const table of ['crash_shipments', 'crash_orders', 'crash_stock']) await raw.query(`drop table if exists ${schema}.${table}`, []).catch(() => undefined);
      await raw.close();
    }
    if (dir) removeDir(dir);
  });

  test(`${SHARE[backend.name]} kill points`, async () => {
    const points = raw ? [...LOCKED_POINTS, 'random', 'random_failing'] as KillPoint[] : TIMED_POINTS;
    let service = await ServiceProcess.start(configFile);
    // runs an earlier run of this suite left for a person are not this one's
    const earlier = new Set((await settledRuns(service.url)).filter((run) => run.state === 'needs_attention').map((run) => run.run));
    const base = 1000 * (1 + Math.floor(Math.random() * 1000));
    const seen: Record<string, number> = {};
    try {
      for (let index = 0; index < SHARE[backend.name]; index += 1) {
        const point = points[index % points.length] as KillPoint;
        const id = base + index;
        const item = `item-${id}`;
        const failing = point === 'in_compensation' || point === 'random_failing';
        assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
        if (failing) assert.is((await call(service.url, 'actions/run', 'crash_ship_first', { id })).status, 200);
        const before = { qty: OLD_QTY, orders: 0, shipments: failing ? 1 : 0 };
        const after = { qty: NEW_QTY, orders: 1, shipments: 1 };

        let held: Held | undefined;
        const probe = raw;
        if (probe && point === 'in_reserve') held = await hold(probe, [{ sql: `select qty from ${schema}.crash_stock where item = ? for update`, bindings: [item] }], true);
        if (probe && point === 'in_order') held = await hold(probe, [{ sql: `insert into ${schema}.crash_orders (id, item, ready) values (?, ?, 1)`, bindings: [id, item] }], false);
        if (probe && point === 'in_ship') held = await hold(probe, [{ sql: `insert into ${schema}.crash_shipments (order_id) values (?)`, bindings: [id] }], false);
        const ready = point === 'in_wait' || point === 'in_compensation' ? 0 : 1;
        const request = call(service.url, 'actions/run', 'crash_place', { id, item, oldQty: OLD_QTY, newQty: NEW_QTY, ready });

        if (probe && point === 'in_wait') await until('the order to be journaled', async () => (await openSteps(probe)).some((step) => step.position === 1));
        else if (probe && point === 'in_compensation') {
          await until('the order to be journaled', async () => (await openSteps(probe)).some((step) => step.position === 1));
          // the reserve's compensation will wait for this lock: the process dies inside the compensations
          held = await hold(probe, [{ sql: `select qty from ${schema}.crash_stock where item = ? for update`, bindings: [item] }], true);
          assert.is((await call(service.url, 'actions/run', 'crash_ready', { id })).status, 200);
          await until('the order to be compensated', async () => (await openSteps(probe)).some((step) => step.position === 1 && step.compensation_status === 'compensated'));
        } else if (point === 'in_wait') await pause(1_500);
        else if (held) await pause(300);
        else await pause(Math.floor(Math.random() * 700));

        service.signal('SIGKILL');
        await service.exited;
        await held?.release();
        // a timed kill may come after the answer; a kill at a held lock never does
        const answered = (await request).status;
        if (held) assert.is(answered, 0, `${point}: the killed process answered`);

        const restarting = Date.now();
        service = await ServiceProcess.start(configFile);
        if (process.env['VDB_TEST_ACTION_TIMES']) console.log(point, 'restart', Date.now() - restarting, 'ms');
        const runs = await settledRuns(service.url);
        assert.equal(runs.filter((run) => run.state === 'needs_attention' && !earlier.has(run.run)), [], `${point}: a run needs attention`);
        const state = await stateOf(service.url, id, item);
        const ended = JSON.stringify(state) === JSON.stringify(before) ? 'before' : JSON.stringify(state) === JSON.stringify(after) ? 'after' : 'between';
        assert.ok(ended === 'before' || (ended === 'after' && !failing), `${point} (#${index}): the data is ${JSON.stringify(state)}, neither ${JSON.stringify(before)} nor ${JSON.stringify(after)}`);
        seen[`${point}:${ended}`] = (seen[`${point}:${ended}`] ?? 0) + 1;
      }
    } finally {
      await service.kill();
    }
    // every kill point was met (each has its turn), and at least one run was undone
    for (const point of points.slice(0, SHARE[backend.name])) assert.ok(Object.keys(seen).some((key) => key.startsWith(`${point}:`)), `kill point ${point} was never met: ${JSON.stringify(seen)}`);
    assert.ok(Object.keys(seen).some((key) => key.endsWith(':before')), JSON.stringify(seen));
  });

  test.run();
});
