import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { pgClient, type DoorTarget } from '../support/sql-clients.js';
import { spawnService, type SpawnedService } from '../support/spawned-service.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig } from '../support/test-service.js';

// test-lane: soak (runaways beside an admin whose answers are awaited within bounds: one such suite at a time, see scripts/run-tests.mjs)

/**
 * No caller holds the embedded database for the others: the service as its own process on PGlite (in
 * memory, the default), an analyst's runaway statements through the SQL door beside an admin who calls a
 * query endpoint and runs a statement through the door.
 */
const test = suite<{ service: SpawnedService; door: DoorTarget }>('pglite: an analyst\'s runaways beside an admin', { service: undefined as unknown as SpawnedService, door: undefined as unknown as DoorTarget });

const LIMIT_MS = 5_000;
/** Past its limit, a runaway must have answered within this (a reopen of the database on a busy machine included). */
const SLACK_MS = 3_000;
/** How long the admin may wait for an answer while the runaways are in flight. */
const ADMIN_BOUND_MS = 2_000;
const RUNAWAYS = 12;
/** Four copies of order_lines crossed: billions of rows, far past any limit here. */
const RUNAWAY_SQL = 'select count(*) as n from sales.order_lines a, sales.order_lines b, sales.order_lines c, sales.order_lines d';

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test.before(async (context) => {
  context.service = await spawnService(demoConfig({
    logging: { level: 'warn' },
    server: { host: '127.0.0.1', port: 0, requestTimeoutMs: LIMIT_MS },
    sql: { enabled: true, port: 0, statementTimeoutMs: LIMIT_MS },
  }));
  context.door = { port: context.service.sqlPort as number, database: 'retail@1' };
});

test.after(async ({ service }) => {
  await service?.stop();
});

interface Outcome {
  code: string | undefined;
  ms: number;
}

/** Runs `sql` as `token` on a connection of its own; resolves with its SQLSTATE (undefined: it answered) and how long it took. */
async function doorStatement(door: DoorTarget, token: string, sql: string): Promise<Outcome> {
  const client = pgClient(door, token);
  await client.connect();
  const started = Date.now();
  try {
    await client.query(sql);
    return { code: undefined, ms: Date.now() - started };
  } catch (error) {
    return { code: String((error as { code?: unknown }).code), ms: Date.now() - started };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `promise`, or 'pending' when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, sleep(ms).then(() => 'pending' as const)]);
}

test(`with ${RUNAWAYS} runaways of an analyst in flight, the admin's query endpoint and door statement answer within ${ADMIN_BOUND_MS} ms; each runaway ends within its limit with 57014 or 57P01`, async ({ service, door }) => {
  const runaways = Array.from({ length: RUNAWAYS }, () => doorStatement(door, ANALYST_TOKEN, RUNAWAY_SQL));
  // every runaway accepted, the first one running
  await sleep(1_000);

  const queried = Date.now();
  const endpoint = await within(fetch(`${service.url}/api/v1/query/perform/customer_orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 7 }),
  }).then(async (response) => ({ status: response.status, body: await response.text(), ms: Date.now() - queried })), 20_000);
  assert.ok(endpoint !== 'pending', 'the admin\'s query endpoint did not answer within 20 s');
  assert.is(endpoint.status, 200, endpoint.body);
  assert.ok(endpoint.ms < ADMIN_BOUND_MS, `the admin's query endpoint answered after ${endpoint.ms} ms`);

  const statement = await within(doorStatement(door, ADMIN_TOKEN, 'select count(*) as n from sales.customers'), 20_000);
  assert.ok(statement !== 'pending', 'the admin\'s door statement did not answer within 20 s');
  assert.is(statement.code, undefined);
  assert.ok(statement.ms < ADMIN_BOUND_MS, `the admin's door statement answered after ${statement.ms} ms`);

  const outcomes = await Promise.all(runaways.map((runaway) => within(runaway, LIMIT_MS + SLACK_MS)));
  for (const outcome of outcomes) {
    assert.ok(outcome !== 'pending', `a runaway had no answer ${LIMIT_MS + SLACK_MS} ms after it was sent`);
    assert.ok(outcome.code === '57014' || outcome.code === '57P01', `a runaway ended with ${outcome.code}`);
    assert.ok(outcome.ms < LIMIT_MS + SLACK_MS, `a runaway ended after ${outcome.ms} ms`);
  }
});

test('once the runaways are over, the analyst is served again (after its lane\'s suspension, docs/configuration.md)', async ({ door }) => {
  const until = Date.now() + 30_000;
  let last: Outcome;
  do last = await doorStatement(door, ANALYST_TOKEN, 'select count(*) as n from sales.orders');
  while (last.code === '57014' && Date.now() < until);
  assert.is(last.code, undefined);
});

test.run();
