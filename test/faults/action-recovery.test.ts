// test-lane: soak
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { faultSkipReason, pause, PgCluster, removeDir, ServiceProcess } from '../support/fault-servers.js';
import { actionBundle, call, crashTables, NEW_QTY, OLD_QTY, settledRuns, stateOf } from './action-bundle.js';

/**
 * Recovery of action runs beyond one process's crash (docs/actions.md#recovery), on a PostgreSQL cluster of
 * the test's own: the database restarted in the middle of an action, and two instances recovering the runs
 * of a killed third at once.
 */
const skip = faultSkipReason('postgres');
const test = suite<{ cluster: PgCluster; dirs: string[] }>('faults: action runs across a database restart and several instances');

/** The port of this suite's cluster, in the range of its worktree's extra servers. */
const CLUSTER_PORT = Number(process.env['VDB_TEST_ACTION_CLUSTER_PORT'] ?? 5560);

if (skip !== undefined) {
  test.skip(`(${skip})`, () => undefined);
} else {
  test.before(async (context) => {
    context.dirs = [];
    context.cluster = await PgCluster.create(CLUSTER_PORT);
    for (const statement of crashTables('postgres', 'crash')) await context.cluster.sql(statement);
  });

  test.after(async ({ cluster, dirs }) => {
    await cluster?.drop();
    for (const dir of dirs ?? []) removeDir(dir);
  });

  const bundle = (context: { cluster: PgCluster; dirs: string[] }, instanceId: string) => {
    const { configFile, dir } = actionBundle({ adapter: 'postgres', connection: { connectionString: context.cluster.url }, pool: { max: 6 } }, 'crash', instanceId);
    context.dirs.push(dir);
    return configFile;
  };
  const journaledOrders = async (cluster: PgCluster) => Number((await cluster.sql(`select count(*)::int as n from vdb_service.action_steps s
join vdb_service.action_runs r using (run_id) where r.state = 'running' and s.position = 1`))[0]?.['n']);

  test('the database restarted while an action waits: the action ends as before it, never between', async (context) => {
    const service = await ServiceProcess.start(bundle(context, 'restart-1'));
    try {
      for (const [index, downMs] of [0, 3_000].entries()) {
        const id = 100 + index;
        const item = `restart-${id}`;
        assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
        const answer = call(service.url, 'actions/run', 'crash_place', { id, item, oldQty: OLD_QTY, newQty: NEW_QTY, ready: 0 });
        for (let tries = 0; (await journaledOrders(context.cluster)) === 0; tries += 1) {
          assert.ok(tries < 400, 'the order was journaled');
          await pause(50);
        }
        if (downMs === 0) await context.cluster.ctl('restart');
        else {
          await context.cluster.ctl('stop');
          await pause(downMs);
          await context.cluster.ctl('start');
        }
        const status = (await answer).status;
        assert.ok(status === 503 || status === 504 || status === 409, `the action answered ${status}`);
        const runs = await settledRuns(service.url);
        assert.equal(runs.filter((run) => run.state === 'needs_attention'), []);
        assert.equal(await stateOf(service.url, id, item), { qty: OLD_QTY, orders: 0, shipments: 0 });
      }
      assert.ok(service.alive, 'no database event ends the process');
    } finally {
      await service.kill();
    }
  });

  test('two instances recover the runs of a killed third at once: each run once, the data as before', async (context) => {
    const first = await ServiceProcess.start(bundle(context, 'many-1'));
    const ids = [200, 201, 202, 203];
    for (const id of ids) assert.is((await call(first.url, 'actions/run', 'crash_stock_add', { item: `many-${id}`, qty: OLD_QTY })).status, 200);
    const answers = ids.map((id) => call(first.url, 'actions/run', 'crash_place', { id, item: `many-${id}`, oldQty: OLD_QTY, newQty: NEW_QTY, ready: 0 }));
    for (let tries = 0; (await journaledOrders(context.cluster)) < ids.length; tries += 1) {
      assert.ok(tries < 400, 'every order was journaled');
      await pause(50);
    }
    first.signal('SIGKILL');
    await first.exited;
    await Promise.all(answers);
    const [second, third] = await Promise.all([ServiceProcess.start(bundle(context, 'many-2')), ServiceProcess.start(bundle(context, 'many-3'))]);
    try {
      const runs = await settledRuns(second.url);
      const recovered = runs.filter((run) => run.state === 'recovered').length;
      assert.ok(recovered >= ids.length, JSON.stringify(runs));
      for (const id of ids) assert.equal(await stateOf(third.url, id, `many-${id}`), { qty: OLD_QTY, orders: 0, shipments: 0 });
      // each run was claimed by one instance only: one "recovering" line per run over both
      const claims = (second.output + third.output).split('\n').filter((line) => line.includes('recovering an action run left unfinished')).length;
      assert.is(claims, ids.length);
    } finally {
      await Promise.all([second.kill(), third.kill()]);
    }
  });
}

test.run();
