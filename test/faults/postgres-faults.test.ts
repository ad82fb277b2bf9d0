import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { faultSkipReason, freePort, isCleanAnswer, pause, perform, PgCluster, removeDir, ServiceProcess, type Answer } from '../support/fault-servers.js';
import pg from 'pg';
import { FAULT_TOKEN, REQUEST_TIMEOUT_MS, RSS_NOISE_KIB, faultBundle, soak } from './fault-bundle.js';

// test-lane: soak (its own PostgreSQL cluster and service process under load, and a memory soak: one such suite at a time, see scripts/run-tests.mjs)

/**
 * PostgreSQL going away under the service (`node dist/core/cli.js start`, a process of its own) on a cluster
 * the test creates on a free port: restarted under load, its backends terminated mid-statement, frozen
 * (SIGSTOP: connections open, nothing answers). The process lives, every request gets an answer (rows,
 * 503 `datasource_unavailable` or 504 `statement_timeout`: never a hang or a dropped connection), and the
 * service serves again once the database is back. Last, SIGTERM ends the process while the database is
 * frozen.
 */
const skip = faultSkipReason('postgres');
const test = suite<{ cluster: PgCluster; service: ServiceProcess; dir: string; sqlPort: number }>('faults: PostgreSQL restarted, terminated, frozen');

/** An answer that never came is one the test waits for this long before calling it a hang. */
const HANG_MS = REQUEST_TIMEOUT_MS + 8_000;
/** What a statement on a database that does not answer may take beyond its time limit. */
const DEADLINE_SLACK_MS = 3_000;

/** Each of `clients` sends `next()` one after another until `running()` is false; every answer, in order of arrival. */
async function load(url: string, clients: number, request: () => [string, unknown], running: () => boolean): Promise<(Answer & { at: number })[]> {
  const answers: (Answer & { at: number })[] = [];
  await Promise.all(Array.from({ length: clients }, async () => {
    while (running()) {
      const [name, body] = request();
      answers.push({ ...(await perform(url, FAULT_TOKEN, name, body, HANG_MS)), at: performance.now() });
    }
  }));
  return answers;
}

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

if (skip) {
  test.skip(`(${skip})`, () => undefined);
} else {
  test.before(async (context) => {
    context.cluster = await PgCluster.create();
    await context.cluster.sql('create schema faults');
    await context.cluster.sql(`create table faults.items (id integer primary key, label text not null)`);
    await context.cluster.sql(`insert into faults.items select g, 'item ' || g from generate_series(1, 100) g`);
    context.sqlPort = await freePort();
    const { configFile, dir } = faultBundle('postgres', context.cluster.url, 'faults', 'select count(*) as n from generate_series(1, 400000) g', context.sqlPort);
    context.dir = dir;
    context.service = await ServiceProcess.start(configFile);
  });
  test.after(async ({ cluster, service, dir }) => {
    await service?.kill();
    await cluster?.drop();
    if (dir) removeDir(dir);
  });

  test('soak: 20 clients on a query endpoint after a warm-up: every request answers 200, and the process keeps less than 0.5 KiB per request', async ({ service }) => {
    const result = await soak(service, 20, 3_000, 120_000);
    console.log(`  soak (PostgreSQL): ${result.requests} requests; after a full collection RSS ${result.rssKibPerRequest.toFixed(3)} KiB, heap and external ${result.retainedKibPerRequest.toFixed(3)} KiB per request`);
    assert.equal(Object.keys(result.statuses), ['200'], JSON.stringify(result.statuses));
    assert.ok(result.requests >= 6_000, `${result.requests} requests: the measure ended at its time cap`);
    assert.ok(result.retainedKibPerRequest < 0.5, `${result.retainedKibPerRequest.toFixed(3)} KiB kept per request`);
    // the resident set moves by a few MiB as the allocator and the collector please: allowed beside the bound
    const rssGrowthKib = result.rssKibPerRequest * result.requests;
    assert.ok(rssGrowthKib < 0.5 * result.requests + RSS_NOISE_KIB, `RSS ${Math.round(rssGrowthKib)} KiB more after ${result.requests} requests`);
  });

  test('PostgreSQL restarted under 10 clients: the process lives, every request answers 200, 503 or 504, and the service serves again once it is back', async ({ cluster, service }) => {
    let running = true;
    const loading = load(service.url, 10, () => ['fault_one', { id: 1 + Math.floor(Math.random() * 100) }], () => running);
    await pause(1_500);
    await cluster.ctl('restart');
    const back = performance.now();
    await pause(2_000);
    running = false;
    const answers = await loading;
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    const unclean = answers.filter((answer) => !isCleanAnswer(answer));
    assert.equal(unclean, [], `every request answers cleanly: ${describe(answers)}`);
    assert.ok(answers.some((answer) => answer.status !== 200), `the restart was seen by some request: ${describe(answers)}`);
    assert.ok(answers.some((answer) => answer.status === 200 && answer.at > back + 500), `requests succeed after the restart: ${describe(answers)}`);
    const again = await servesAgain(service);
    assert.equal(again.map((answer) => answer.status), again.map(() => 200), describe(again));
    const failed = answers.filter((answer) => answer.status !== 200);
    console.log(`  restart: ${answers.length} requests ${describe(answers)}; slowest non-200 answer ${Math.round(Math.max(...failed.map((answer) => answer.ms)))} ms`);
  });

  test('the service\'s backends terminated mid-statement under 30 clients: the process lives, every request answers cleanly, the service serves again', async ({ cluster, service }) => {
    let running = true;
    const loading = load(service.url, 30, () => (Math.random() < 0.5 ? ['fault_work', {}] : ['fault_one', { id: 7 }]), () => running);
    let terminated = 0;
    for (let round = 0; round < 6; round += 1) {
      await pause(400);
      const rows = await cluster.sql(`select count(pg_catalog.pg_terminate_backend(pid)) as n from pg_catalog.pg_stat_activity where application_name = 'vdb-service'`);
      terminated += Number(rows[0]?.['n']);
    }
    await pause(1_000);
    running = false;
    const answers = await loading;
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.ok(terminated > 0, 'backends of the service were terminated');
    assert.equal(answers.filter((answer) => !isCleanAnswer(answer)), [], `every request answers cleanly: ${describe(answers)}`);
    const again = await servesAgain(service);
    assert.equal(again.map((answer) => answer.status), again.map(() => 200), describe(again));
    console.log(`  terminate: ${terminated} backends terminated, ${answers.length} requests ${describe(answers)}`);
  });

  test('the SQL door\'s forwarded statements while the service\'s backends are terminated: the process lives, each statement answers rows or an error, the door serves again', async ({ cluster, service, sqlPort }) => {
    const door = () => new pg.Client({ host: '127.0.0.1', port: sqlPort, database: 'faults@1', user: 'tester', password: FAULT_TOKEN, query_timeout: HANG_MS });
    let running = true;
    const outcomes = new Map<string, number>();
    const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
    const clients = Array.from({ length: 10 }, async (_, index) => {
      while (running) {
        const client = door();
        client.on('error', () => undefined);
        try {
          await client.connect();
          while (running) {
            const result = await client.query('select id, label from faults.items, generate_series(1, 20000) g where id = $1 limit 1', [index + 1]);
            count(result.rows.length === 1 ? 'rows' : 'empty');
          }
        } catch (error) {
          count(String((error as { code?: unknown }).code ?? (error as Error).message));
        } finally {
          await client.end().catch(() => undefined);
        }
      }
    });
    for (let round = 0; round < 5; round += 1) {
      await pause(400);
      await cluster.sql(`select pg_catalog.pg_terminate_backend(pid) from pg_catalog.pg_stat_activity where application_name = 'vdb-service'`);
    }
    running = false;
    await Promise.all(clients);
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.not.ok(outcomes.has('Query read timeout'), `no statement hung: ${JSON.stringify(Object.fromEntries(outcomes))}`);
    const client = door();
    await client.connect();
    try {
      assert.equal((await client.query('select label from faults.items where id = $1', [3])).rows, [{ label: 'item 3' }]);
    } finally {
      await client.end();
    }
    console.log(`  SQL door: ${JSON.stringify(Object.fromEntries(outcomes))}`);
  });

  test('PostgreSQL frozen (SIGSTOP) with connections open: each statement answers within its time limit plus slack; the service serves again once it resumes', async ({ cluster, service }) => {
    // idle connections in the pool, which the frozen server will never answer on
    await Promise.all(Array.from({ length: 5 }, (_, index) => perform(service.url, FAULT_TOKEN, 'fault_one', { id: index + 1 }, HANG_MS)));
    await cluster.freeze(true);
    let answers: Answer[];
    try {
      answers = await Promise.all(Array.from({ length: 5 }, (_, index) => perform(service.url, FAULT_TOKEN, 'fault_one', { id: index + 1 }, HANG_MS)));
    } finally {
      await cluster.freeze(false);
    }
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.equal(answers.filter((answer) => !isCleanAnswer(answer) || answer.status === 200), [], `each answers 503 or 504: ${describe(answers)}`);
    const slowest = Math.max(...answers.map((answer) => answer.ms));
    assert.ok(slowest <= REQUEST_TIMEOUT_MS + DEADLINE_SLACK_MS, `answered within ${REQUEST_TIMEOUT_MS} ms + slack: ${Math.round(slowest)} ms`);
    const again = await servesAgain(service);
    assert.equal(again.map((answer) => answer.status), again.map(() => 200), describe(again));
    console.log(`  frozen: ${describe(answers)}, slowest ${Math.round(slowest)} ms`);
  });

  test('an action on a frozen PostgreSQL: its operation\'s transaction is given up within its time limit plus slack (503 or 504); the action runs again once the server resumes', async ({ cluster, service }) => {
    const relabel = (label: string) => perform(service.url, FAULT_TOKEN, 'fault_relabel', { id: 7, label }, HANG_MS, 'actions/run');
    // the scope's transaction pool holds an open, idle connection when the server freezes
    assert.is((await relabel('before')).status, 200);
    await cluster.freeze(true);
    let frozen: Answer;
    try {
      frozen = await relabel('frozen');
    } finally {
      await cluster.freeze(false);
    }
    assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
    assert.ok(frozen.status === 503 || frozen.status === 504, `answered 503 or 504: ${describe([frozen])}`);
    assert.ok(frozen.ms <= REQUEST_TIMEOUT_MS + DEADLINE_SLACK_MS, `answered within ${REQUEST_TIMEOUT_MS} ms + slack: ${Math.round(frozen.ms)} ms`);
    assert.is((await relabel('after')).status, 200);
    assert.equal(await cluster.sql('select label from faults.items where id = 7'), [{ label: 'after' }]);
  });

  test('the SQL door on a frozen PostgreSQL: a forwarded statement answers 57014 within its time limit plus slack; the door serves again once it resumes', async ({ cluster, service, sqlPort }) => {
    const client = new pg.Client({ host: '127.0.0.1', port: sqlPort, database: 'faults@1', user: 'tester', password: FAULT_TOKEN, query_timeout: HANG_MS });
    client.on('error', () => undefined);
    await client.connect();
    try {
      // the statement's backend connection is pooled, open and idle when the server freezes
      await client.query('select label from faults.items where id = $1', [2]);
      await cluster.freeze(true);
      const started = performance.now();
      let code: unknown;
      try {
        await client.query('select label from faults.items where id = $1', [2]);
        code = 'rows';
      } catch (error) {
        code = (error as { code?: unknown }).code ?? (error as Error).message;
      } finally {
        await cluster.freeze(false);
      }
      const ms = performance.now() - started;
      assert.ok(service.alive, `the service process died: ${service.output.slice(-2000)}`);
      assert.is(code, '57014', `the statement is given up at its deadline: ${String(code)} after ${Math.round(ms)} ms`);
      assert.ok(ms <= REQUEST_TIMEOUT_MS + DEADLINE_SLACK_MS, `answered within ${REQUEST_TIMEOUT_MS} ms + slack: ${Math.round(ms)} ms`);
      assert.equal((await client.query('select label from faults.items where id = $1', [3])).rows, [{ label: 'item 3' }]);
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  test('readiness: 503 naming the datasource while PostgreSQL is stopped or frozen (within its bound), health stays UP counting it down, the gauge reads 0; all back once it is', async ({ cluster, service }) => {
    const read = async (path: string) => {
      const started = performance.now();
      const response = await fetch(`${service.url}${path}`, { signal: AbortSignal.timeout(HANG_MS) });
      return { status: response.status, text: await response.text(), ms: performance.now() - started };
    };
    const gauge = async () => /^vdb_datasource_up\{datasource="db"\} (\d)$/m.exec((await read('/observe/metrics')).text)?.[1];
    const ready = await read('/observe/ready');
    assert.equal([ready.status, JSON.parse(ready.text)], [200, { status: 'READY', unavailable: [] }]);
    assert.is(await gauge(), '1');
    await cluster.ctl('stop');
    try {
      await pause(1_100);
      const stopped = await read('/observe/ready');
      assert.equal([stopped.status, JSON.parse(stopped.text)], [503, { status: 'NOT_READY', unavailable: ['db'] }]);
      assert.not.match(stopped.text, String(cluster.port), 'no connection details');
      const health = await read('/observe/health');
      assert.is(health.status, 200);
      assert.equal((JSON.parse(health.text) as { datasources: unknown }).datasources, { total: 1, up: 0, down: 1 });
      assert.is(await gauge(), '0');
    } finally {
      await cluster.ctl('start');
    }
    await pause(1_100);
    assert.is((await read('/observe/ready')).status, 200);
    assert.is(await gauge(), '1');
    await cluster.freeze(true);
    let frozen: { status: number; text: string; ms: number };
    try {
      await pause(1_100);
      frozen = await read('/observe/ready');
    } finally {
      await cluster.freeze(false);
    }
    assert.is(frozen.status, 503, frozen.text);
    assert.ok(frozen.ms < 3_000 + DEADLINE_SLACK_MS, `the check is bounded: ${Math.round(frozen.ms)} ms`);
    await pause(1_100);
    assert.is((await read('/observe/ready')).status, 200);
  });

  test('SIGTERM while PostgreSQL is frozen and a statement waits on it: the process ends within its grace time', async ({ cluster, service }) => {
    await servesAgain(service);
    await cluster.freeze(true);
    try {
      const pending = perform(service.url, FAULT_TOKEN, 'fault_work', {}, HANG_MS);
      await pause(500);
      const signalled = performance.now();
      service.signal('SIGTERM');
      const ended = await Promise.race([service.exited, pause(20_000).then(() => undefined)]);
      assert.ok(ended, 'the process ended within 20 s of SIGTERM');
      assert.is(ended?.code, 0, service.output.slice(-2000));
      console.log(`  SIGTERM: ended after ${Math.round(performance.now() - signalled)} ms`);
      await pending;
    } finally {
      await cluster.freeze(false);
    }
  });
}

test.run();
