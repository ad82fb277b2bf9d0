import * as assert from 'uvu/assert';
import { pause, ServiceProcess } from '../support/fault-servers.js';
import { admin, call, CRASH_TOKEN, NEW_QTY, OLD_QTY, settledRuns, stateOf } from './action-bundle.js';

/**
 * The recovery cases of test/faults/action-recovery*.test.ts, on a database server the suite owns (a
 * PostgreSQL cluster, a MariaDB server): the database restarted in the middle of an action, a compensation
 * that cannot succeed after it, runs with an `Idempotency-Key` across a SIGKILL, and two instances
 * recovering the runs of a killed third at once (docs/actions.md#recovery).
 */
export interface OwnDatabase {
  /** Stops the database, leaves it down `downMs` (0: at once) and starts it again. */
  restart(downMs: number): Promise<void>;
  /** One statement as the database's superuser, on a connection of its own. */
  sql(text: string): Promise<Record<string, unknown>[]>;
  /** A config file of the crash bundle on this database, for the instance `instanceId`. */
  bundle(instanceId: string): string;
}

/** A run as `GET /api/v1/admin/actions/runs/{id}` shows it. */
interface RunDetail {
  run: string;
  state: string;
  request: Record<string, unknown>;
  response: { ok: boolean; code?: string } | null;
  problem: Record<string, unknown> | null;
  steps: { position: number; name: string; compensationStatus: string; compensation: Record<string, unknown> | null; problem: string | null }[];
}

/** Unfinished runs whose step `position` is journaled: the action is past that operation. */
async function journaledSteps(database: OwnDatabase, position: number): Promise<number> {
  const [row] = await database.sql(`select count(*) as n from vdb_service.action_steps s
join vdb_service.action_runs r on r.run_id = s.run_id where r.state = 'running' and s.position = ${position}`);
  return Number(row?.['n']);
}

async function untilJournaled(database: OwnDatabase, count: number): Promise<void> {
  for (let tries = 0; (await journaledSteps(database, 1)) < count; tries += 1) {
    assert.ok(tries < 400, `${count} runs were journaled past their first operation`);
    await pause(50);
  }
}

/** The run of `action` whose request has this `id`, with its steps. */
async function runOf(url: string, action: string, id: number): Promise<RunDetail> {
  const listed = (await admin(url, `actions/runs?limit=500&action=${action}`)).body['runs'] as { run: string }[];
  for (const { run } of listed) {
    const detail = (await admin(url, `actions/runs/${run}`)).body as unknown as RunDetail;
    if (detail.request['id'] === id) return detail;
  }
  throw new Error(`no run of ${action} for id ${id}`);
}

/** The value of one series of the service's metrics, 0 when it is not there. */
async function metric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/observe/metrics`, { headers: { authorization: `Bearer ${CRASH_TOKEN}` } })).text();
  const line = text.split('\n').find((one) => one.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const RECOVERED = (action: string, outcome: string) => `vdb_action_runs_recovered_total{action="${action}",outcome="${outcome}"}`;
const NEEDING_ATTENTION = (action: string) => `vdb_action_runs_needing_attention_total{action="${action}"}`;

/**
 * The database restarted (at once, then down 3 s) while an action waits between its operations: the request
 * answers 503 (its database went away), the process lives, and once recovery is done the data is as before
 * the action; the journal says so (`recovered`, every step compensated), and so do the metrics.
 */
export async function restartWhileWaiting(database: OwnDatabase, base: number): Promise<void> {
  const service = await ServiceProcess.start(database.bundle('restart-1'));
  try {
    for (const [index, downMs] of [0, 3_000].entries()) {
      const id = base + index;
      const item = `restart-${id}`;
      assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
      const answer = call(service.url, 'actions/run', 'crash_place', { id, item, oldQty: OLD_QTY, newQty: NEW_QTY, ready: 0 });
      await untilJournaled(database, 1);
      await database.restart(downMs);
      const { status, body } = await answer;
      const runs = await settledRuns(service.url);
      assert.equal(runs.filter((run) => run.state === 'needs_attention'), []);
      assert.equal(await stateOf(service.url, id, item), { qty: OLD_QTY, orders: 0, shipments: 0 }, `down ${downMs} ms: the data is as before the action`);
      const run = await runOf(service.url, 'crash_place', id);
      assert.equal(run.steps.map((step) => [step.name, step.compensationStatus]), [['reserve', 'compensated'], ['order', 'compensated']], `down ${downMs} ms: ${JSON.stringify(run)}`);
      // a restart the wait's reads never met ends the wait in time, an ordinary failure the request itself undid
      if (status === 504) {
        assert.is(body['code'], 'wait_timeout', JSON.stringify(body));
        assert.equal([run.state, run.response?.code], ['failed', 'wait_timeout']);
      } else {
        assert.equal([status, body['code']], [503, 'datasource_unavailable'], `down ${downMs} ms: ${JSON.stringify(body)}`);
        assert.is(run.state, 'recovered', `down ${downMs} ms: the journal tells the run's end`);
      }
    }
    assert.ok(await metric(service.url, RECOVERED('crash_place', 'compensated')) >= 1, 'recovered runs are counted');
    assert.ok(service.alive, 'no database event ends the process');
  } finally {
    await service.kill();
  }
}

/**
 * The database down 3 s while an action whose first rollback cannot succeed waits: recovery undoes the second
 * operation, cannot undo the first, and leaves the run `needs_attention` with what a person needs; logged and
 * counted.
 */
export async function brokenCompensationAfterRestart(database: OwnDatabase, id: number): Promise<void> {
  const service = await ServiceProcess.start(database.bundle('broken-1'));
  try {
    const item = `broken-${id}`;
    assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
    assert.is((await call(service.url, 'actions/run', 'crash_ship_first', { id })).status, 200);
    const answer = call(service.url, 'actions/run', 'crash_broken_wait', { id, item });
    await untilJournaled(database, 1);
    await database.restart(3_000);
    const { status, body } = await answer;
    // 503: a read of the wait met the database away, recovery finishes the run; 504: the wait's reads waited
    // for it to come back and ran out of time, the request undid the run itself
    const byRecovery = status === 503;
    assert.equal([status, body['code']], byRecovery ? [503, 'datasource_unavailable'] : [504, 'wait_timeout'], JSON.stringify(body));
    for (let tries = 0; (await runOf(service.url, 'crash_broken_wait', id)).state !== 'needs_attention'; tries += 1) {
      assert.ok(tries < 300, 'the run ends needs_attention');
      await pause(200);
    }
    const run = await runOf(service.url, 'crash_broken_wait', id);
    assert.equal(run.steps.map((step) => [step.name, step.compensationStatus]), [['reserve', 'failed'], ['order', 'compensated']]);
    assert.is(run.problem?.['operation'], 'reserve');
    assert.ok(String((run.problem?.['compensation'] as Record<string, unknown> | undefined)?.['sql']).includes('crash_shipments'), JSON.stringify(run.problem));
    assert.ok(String(run.problem?.['reason']).length > 0 && String(run.steps[0]?.problem).length > 0, 'the database\'s reason is kept');
    // the order is undone, the stock stays as the operation left it, for a person to repair
    assert.equal(await stateOf(service.url, id, item), { qty: 0, orders: 0, shipments: 1 });
    // log lines reach stdout in batches
    const logged = byRecovery ? 'an action run cannot be compensated' : 'compensation failed';
    for (let tries = 0; !service.output.includes(logged); tries += 1) {
      assert.ok(tries < 100, `logged: ${service.output}`);
      await pause(50);
    }
    assert.is(await metric(service.url, NEEDING_ATTENTION('crash_broken_wait')), 1);
    assert.is(await metric(service.url, RECOVERED('crash_broken_wait', 'needs_attention')), byRecovery ? 1 : 0);
    // nothing retries it
    await pause(2_500);
    assert.is((await runOf(service.url, 'crash_broken_wait', id)).state, 'needs_attention');
    assert.is(await metric(service.url, NEEDING_ATTENTION('crash_broken_wait')), 1);
    assert.ok(service.alive);
  } finally {
    await service.kill();
  }
}

/**
 * `Idempotency-Key` across a SIGKILL: a run completed before it answers its first answer after the restart
 * without running again; a run the kill cut is recovered by the next process (counted), which frees its key,
 * so that the client's retry runs the action anew and completes it.
 */
export async function idempotencyAcrossKill(database: OwnDatabase, base: number): Promise<void> {
  const done = { id: base, item: `key-${base}` };
  const cut = { id: base + 1, item: `key-${base + 1}` };
  const keys = { done: `done-${base}`, cut: `cut-${base}` };
  const bodyOf = (one: { id: number; item: string }, ready: number) => ({ ...one, oldQty: OLD_QTY, newQty: NEW_QTY, ready });
  let service = await ServiceProcess.start(database.bundle('keys-1'));
  try {
    for (const one of [done, cut]) assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item: one.item, qty: OLD_QTY })).status, 200);
    const first = await call(service.url, 'actions/run', 'crash_place', bodyOf(done, 1), { 'idempotency-key': keys.done });
    assert.is(first.status, 200, JSON.stringify(first.body));
    const killed = call(service.url, 'actions/run', 'crash_place', bodyOf(cut, 0), { 'idempotency-key': keys.cut });
    await untilJournaled(database, 1);
    // while it runs, the same key is in flight
    const meanwhile = await call(service.url, 'actions/run', 'crash_place', bodyOf(cut, 0), { 'idempotency-key': keys.cut });
    assert.equal([meanwhile.status, meanwhile.body['code']], [409, 'idempotency_key_in_flight']);
    service.signal('SIGKILL');
    await service.exited;
    assert.is((await killed).status, 0, 'the killed process did not answer');

    service = await ServiceProcess.start(database.bundle('keys-1'));
    await settledRuns(service.url);
    assert.is((await runOf(service.url, 'crash_place', cut.id)).state, 'recovered');
    assert.is(await metric(service.url, RECOVERED('crash_place', 'compensated')), 1, 'the next process counts the run it recovered');
    assert.equal(await stateOf(service.url, cut.id, cut.item), { qty: OLD_QTY, orders: 0, shipments: 0 });

    const again = await call(service.url, 'actions/run', 'crash_place', bodyOf(done, 1), { 'idempotency-key': keys.done });
    assert.equal([again.status, again.body], [200, first.body], 'the first answer, after the restart');
    assert.equal(await stateOf(service.url, done.id, done.item), { qty: NEW_QTY, orders: 1, shipments: 1 }, 'nothing ran again');
    const other = await call(service.url, 'actions/run', 'crash_place', { ...bodyOf(done, 1), newQty: 3 }, { 'idempotency-key': keys.done });
    assert.equal([other.status, other.body['code']], [422, 'idempotency_key_reused']);

    const retried = await call(service.url, 'actions/run', 'crash_place', bodyOf(cut, 1), { 'idempotency-key': keys.cut });
    assert.is(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(await stateOf(service.url, cut.id, cut.item), { qty: NEW_QTY, orders: 1, shipments: 1 });
    assert.ok(service.alive);
  } finally {
    await service.kill();
  }
}

/** Two instances recover the runs of a killed third at once: each run once, the data as before. */
export async function twoInstancesRecover(database: OwnDatabase, ids: readonly number[]): Promise<void> {
  const first = await ServiceProcess.start(database.bundle('many-1'));
  for (const id of ids) assert.is((await call(first.url, 'actions/run', 'crash_stock_add', { item: `many-${id}`, qty: OLD_QTY })).status, 200);
  const answers = ids.map((id) => call(first.url, 'actions/run', 'crash_place', { id, item: `many-${id}`, oldQty: OLD_QTY, newQty: NEW_QTY, ready: 0 }));
  await untilJournaled(database, ids.length);
  first.signal('SIGKILL');
  await first.exited;
  await Promise.all(answers);
  const [second, third] = await Promise.all([ServiceProcess.start(database.bundle('many-2')), ServiceProcess.start(database.bundle('many-3'))]);
  try {
    await settledRuns(second.url);
    for (const id of ids) {
      assert.is((await runOf(third.url, 'crash_place', id)).state, 'recovered');
      assert.equal(await stateOf(third.url, id, `many-${id}`), { qty: OLD_QTY, orders: 0, shipments: 0 });
    }
    // each run was claimed by one instance only: one "recovering" line per run over both, and one count
    const claims = () => (second.output + third.output).split('\n').filter((line) => line.includes('recovering an action run left unfinished'));
    // log lines reach stdout in batches: a run recovered may not have its line out yet
    for (let tries = 0; claims().length < ids.length && tries < 100; tries += 1) await pause(50);
    assert.is(claims().length, ids.length, `${second.output}\n${third.output}`);
    const counted = await metric(second.url, RECOVERED('crash_place', 'compensated')) + await metric(third.url, RECOVERED('crash_place', 'compensated'));
    assert.is(counted, ids.length);
  } finally {
    await Promise.all([second.kill(), third.kill()]);
  }
}
