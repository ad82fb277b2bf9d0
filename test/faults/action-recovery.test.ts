// test-lane: soak
import { suite } from 'uvu';
import { faultSkipReason, pause, PgCluster, removeDir } from '../support/fault-servers.js';
import { actionBundle, crashTables } from './action-bundle.js';
import { brokenCompensationAfterRestart, idempotencyAcrossKill, restartWhileWaiting, twoInstancesRecover, type OwnDatabase } from './action-recovery-cases.js';

/**
 * Recovery of action runs beyond one process's crash (docs/actions.md#recovery), on a PostgreSQL cluster of
 * the test's own: the database restarted in the middle of an action, a compensation that cannot succeed after
 * it, `Idempotency-Key` across a SIGKILL, and two instances recovering the runs of a killed third at once.
 * The same cases on MariaDB: action-recovery-mariadb.test.ts.
 */
const skip = faultSkipReason('postgres');
const test = suite<{ cluster: PgCluster; database: OwnDatabase; dirs: string[] }>('faults: action runs across a PostgreSQL restart, a SIGKILL and several instances');

/** The port of this suite's cluster, in the range of its worktree's extra servers. */
const CLUSTER_PORT = Number(process.env['VDB_TEST_ACTION_CLUSTER_PORT'] ?? 5560);

if (skip !== undefined) {
  test.skip(`(${skip})`, () => undefined);
} else {
  test.before(async (context) => {
    context.dirs = [];
    const cluster = await PgCluster.create(CLUSTER_PORT);
    context.cluster = cluster;
    for (const statement of crashTables('postgres', 'crash')) await cluster.sql(statement);
    context.database = {
      restart: async (downMs) => {
        if (downMs === 0) await cluster.ctl('restart');
        else {
          await cluster.ctl('stop');
          await pause(downMs);
          await cluster.ctl('start');
        }
      },
      sql: (text) => cluster.sql(text),
      bundle: (instanceId) => {
        const { configFile, dir } = actionBundle({ adapter: 'postgres', connection: { connectionString: cluster.url }, pool: { max: 6 } }, 'crash', instanceId);
        context.dirs.push(dir);
        return configFile;
      },
    };
  });

  test.after(async ({ cluster, dirs }) => {
    await cluster?.drop();
    for (const dir of dirs ?? []) removeDir(dir);
  });

  test('the database restarted while an action waits: the action ends as before it, never between, and the journal says so', ({ database }) => restartWhileWaiting(database, 100));
  test('a compensation that cannot succeed after a restart: needs_attention, with what a person needs, logged and counted once', ({ database }) => brokenCompensationAfterRestart(database, 150));
  test('Idempotency-Key across a SIGKILL: a completed run answers again without running, a cut one is recovered and its key freed', ({ database }) => idempotencyAcrossKill(database, 170));
  test('two instances recover the runs of a killed third at once: each run once, the data as before', ({ database }) => twoInstancesRecover(database, [200, 201, 202, 203]));
}

test.run();
