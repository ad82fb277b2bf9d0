import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { faultSkipReason, isCleanAnswer, MariadbServer, pause, perform, removeDir, ServiceProcess, type Answer } from '../support/fault-servers.js';
import { FAULT_TOKEN, REQUEST_TIMEOUT_MS, RSS_NOISE_KIB, faultBundle, soak } from './fault-bundle.js';

// test-lane: soak (its own MariaDB server and service process under load, and a memory soak: one such suite at a time, see scripts/run-tests.mjs)

/**
 * MariaDB going away under the service (`node dist/core/cli.js start`) on a mariadbd the test starts on a
 * free port and a data directory of its own: stopped and started with statements in flight, frozen
 * (SIGSTOP), and stopped when SIGTERM comes. The statements in flight settle (rows, 503
 * `datasource_unavailable` or 504 `statement_timeout`), no `KILL QUERY` is retried once they have, the
 * service serves again once MariaDB is back, and SIGTERM ends the process.
 */
const skip = faultSkipReason('mariadb');
const test = suite<{ server: MariadbServer; service: ServiceProcess; dir: string }>('faults: MariaDB stopped, started, frozen');

const HANG_MS = REQUEST_TIMEOUT_MS + 8_000;
const DEADLINE_SLACK_MS = 3_000;
/** Joins a thousand rows to themselves three times: runs far past the statements' time limit unless ended. */
const RUNAWAY = 'with recursive r(n) as (select 1 union all select n + 1 from r where n < 1000) select count(*) as n from r a, r b, r c';

function describe(answers: readonly Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    const key = answer.failure ?? `${answer.status} ${answer.code ?? ''}`.trim();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return JSON.stringify(Object.fromEntries(counts));
}

async function servesAgain(service: ServiceProcess): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let id = 1; id <= 20; id += 1) answers.push(await perform(service.url, FAULT_TOKEN, 'fault_one', { id }, HANG_MS));
  return answers;
}

/** Connections the server has accepted since it started (each `KILL QUERY` opens one; so does this reading). */
async function connections(server: MariadbServer): Promise<number> {
  const [row] = await server.sql("show global status like 'Connections'");
  return Number(row?.['Value']);
}

if (skip) {
  test.skip(`(${skip})`, () => undefined);
} else {
  test.before(async (context) => {
    context.server = await MariadbServer.create();
    await context.server.sql('create table test.items (id integer primary key, label varchar(40) not null)');
    await context.server.sql("insert into test.items with recursive g(n) as (select 1 union all select n + 1 from g where n < 100) select n, concat('item ', n) from g");
    const { configFile, dir } = faultBundle('mysql', context.server.url, 'test', RUNAWAY);
    context.dir = dir;
    context.service = await ServiceProcess.start(configFile);
  });
  test.after(async ({ server, service, dir }) => {
    await service?.kill();
    await server?.drop();
    if (dir) removeDir(dir);
  });

  test('soak: 20 clients on a query endpoint after a warm-up: every request answers 200, and the process keeps less than 0.5 KiB per request', async ({ service }) => {
    const result = await soak(service, 20, 3_000, 120_000);
    console.log(`  soak (MariaDB): ${result.requests} requests; after a full collection RSS ${result.rssKibPerRequest.toFixed(3)} KiB, heap and external ${result.retainedKibPerRequest.toFixed(3)} KiB per request`);
    assert.equal(Object.keys(result.statuses), ['200'], JSON.stringify(result.statuses));
    assert.ok(result.requests >= 6_000, `${result.requests} requests: the measure ended at its time cap`);
    assert.ok(result.retainedKibPerRequest < 0.5, `${result.retainedKibPerRequest.toFixed(3)} KiB kept per request`);
    // the resident set moves by a few MiB as the allocator and the collector please: allowed beside the bound
    const rssGrowthKib = result.rssKibPerRequest * result.requests;
    assert.ok(rssGrowthKib < 0.5 * result.requests + RSS_NOISE_KIB, `RSS ${Math.round(rssGrowthKib)} KiB more after ${result.requests} requests`);
  });

  test('MariaDB stopped and started with statements in flight: each settles, the process lives, no KILL QUERY is retried afterwards, the service serves again', async ({ server, service }) => {
    let running = true;
    const answers: Answer[] = [];
    const clients = Array.from({ length: 8 }, async () => {
      while (running) answers.push(await perform(service.url, FAULT_TOKEN, 'fault_one', { id: 1 + Math.floor(Math.random() * 100) }, HANG_MS));
    });
    const runaways = Array.from({ length: 2 }, () => perform(service.url, FAULT_TOKEN, 'fault_work', {}, HANG_MS));
    await pause(1_000);
    await server.stop();
    await pause(1_500);
    await server.start();
    await pause(1_500);
    running = false;
    await Promise.all(clients);
    const inFlight = await Promise.all(runaways);
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.equal(inFlight.filter((answer) => !isCleanAnswer(answer)), [], `the statements in flight settle: ${describe(inFlight)}`);
    assert.equal(answers.filter((answer) => !isCleanAnswer(answer)), [], `every request answers cleanly: ${describe(answers)}`);
    const again = await servesAgain(service);
    assert.equal(again.map((answer) => answer.status), again.map(() => 200), describe(again));
    const before = await connections(server);
    await pause(3_000);
    const opened = (await connections(server)) - before;
    // the second reading's own connection is the only one expected
    assert.ok(opened <= 2, `${opened} connections opened while the service was idle for 3 s (KILL QUERY retried)`);
    console.log(`  stop/start: in flight ${describe(inFlight)} (slowest ${Math.round(Math.max(...inFlight.map((answer) => answer.ms)))} ms), load ${describe(answers)}, ${opened} connections while idle`);
  });

  test('MariaDB frozen (SIGSTOP) with connections open: each statement answers within its time limit plus slack; the service serves again once it resumes', async ({ server, service }) => {
    await Promise.all(Array.from({ length: 5 }, (_, index) => perform(service.url, FAULT_TOKEN, 'fault_one', { id: index + 1 }, HANG_MS)));
    server.freeze(true);
    let answers: Answer[];
    try {
      answers = await Promise.all(Array.from({ length: 5 }, (_, index) => perform(service.url, FAULT_TOKEN, 'fault_one', { id: index + 1 }, HANG_MS)));
    } finally {
      server.freeze(false);
    }
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.equal(answers.filter((answer) => !isCleanAnswer(answer) || answer.status === 200), [], `each answers 503 or 504: ${describe(answers)}`);
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    assert.ok(slowest <= REQUEST_TIMEOUT_MS + DEADLINE_SLACK_MS, `answered within ${REQUEST_TIMEOUT_MS} ms + slack: ${Math.round(slowest)} ms`);
    const again = await servesAgain(service);
    assert.equal(again.map((answer) => answer.status), again.map(() => 200), describe(again));
    console.log(`  frozen: ${describe(answers)}, slowest ${Math.round(slowest)} ms`);
  });

  test('an action on a frozen MariaDB: its operation\'s transaction is given up within its time limit plus slack (503 or 504); the action runs again once the server resumes', async ({ server, service }) => {
    const relabel = (label: string) => perform(service.url, FAULT_TOKEN, 'fault_relabel', { id: 7, label }, HANG_MS, 'actions/run');
    // the role set's pool holds an open, idle connection when the server freezes
    assert.is((await relabel('before')).status, 200);
    server.freeze(true);
    let frozen: Answer;
    try {
      frozen = await relabel('frozen');
    } finally {
      server.freeze(false);
    }
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.ok(frozen.status === 503 || frozen.status === 504, `answered 503 or 504: ${describe([frozen])}`);
    assert.ok(frozen.ms <= REQUEST_TIMEOUT_MS + DEADLINE_SLACK_MS, `answered within ${REQUEST_TIMEOUT_MS} ms + slack: ${Math.round(frozen.ms)} ms`);
    assert.is((await relabel('after')).status, 200);
    assert.equal(await server.sql(`select label from test.items where id = 7`), [{ label: 'after' }]);
  });

  test('SIGTERM while MariaDB is stopped and a statement was in flight: the process ends within its grace time', async ({ server, service }) => {
    const pending = perform(service.url, FAULT_TOKEN, 'fault_work', {}, HANG_MS);
    await pause(700);
    await server.stop();
    const signalled = performance.now();
    service.signal('SIGTERM');
    const ended = await Promise.race([service.exited, pause(20_000).then(() => undefined)]);
    assert.ok(ended, 'the process ended within 20 s of SIGTERM');
    assert.is(ended?.code, 0, service.output.slice(-2000));
    console.log(`  SIGTERM: ended after ${Math.round(performance.now() - signalled)} ms`);
    await pending;
  });
}

test.run();
