// test-lane: soak
import { suite } from 'uvu';
import { faultSkipReason, MariadbServer, pause, removeDir } from '../support/fault-servers.js';
import { actionBundle, crashTables } from './action-bundle.js';
import { brokenCompensationAfterRestart, idempotencyAcrossKill, restartWhileWaiting, twoInstancesRecover, type OwnDatabase } from './action-recovery-cases.js';

/**
 * The cases of action-recovery.test.ts on a MariaDB server of the test's own (its own data directory, port
 * and socket): the server restarted in the middle of an action, a compensation that cannot succeed after it,
 * `Idempotency-Key` across a SIGKILL, and two instances recovering the runs of a killed third at once.
 */
const skip = faultSkipReason('mariadb');
const test = suite<{ server: MariadbServer; database: OwnDatabase; dirs: string[] }>('faults: action runs across a MariaDB restart, a SIGKILL and several instances');

if (skip !== undefined) {
  test.skip(`(${skip})`, () => undefined);
} else {
  test.before(async (context) => {
    context.dirs = [];
    const server = await MariadbServer.create();
    context.server = server;
    for (const statement of crashTables('mysql', 'test')) await server.sql(statement);
    context.database = {
      restart: async (downMs) => {
        await server.stop();
        await pause(downMs);
        await server.start();
      },
      sql: (text) => server.sql(text),
      bundle: (instanceId) => {
        const { configFile, dir } = actionBundle({ adapter: 'mysql', connection: { connectionString: server.url }, pool: { max: 6 } }, 'test', instanceId);
        context.dirs.push(dir);
        return configFile;
      },
    };
  });

  test.after(async ({ server, dirs }) => {
    await server?.drop();
    for (const dir of dirs ?? []) removeDir(dir);
  });

  test('MariaDB restarted while an action waits: the action ends as before it, never between, and the journal says so', ({ database }) => restartWhileWaiting(database, 100));
  test('a compensation that cannot succeed after a restart: needs_attention, with what a person needs, logged and counted once', ({ database }) => brokenCompensationAfterRestart(database, 150));
  test('Idempotency-Key across a SIGKILL: a completed run answers again without running, a cut one is recovered and its key freed', ({ database }) => idempotencyAcrossKill(database, 170));
  test('two instances recover the runs of a killed third at once: each run once, the data as before', ({ database }) => twoInstancesRecover(database, [200, 201, 202, 203]));
}

test.run();
