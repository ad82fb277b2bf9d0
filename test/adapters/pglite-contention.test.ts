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
/** How long any answer may take before the suite gives up on it: a guard against a hang, not a bound tested. */
const HANG_MS = 60_000;
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

/** Runs `sql` as `token` on a connection of its own; resolves with its SQLSTATE (undefined: it answered). */
async function doorStatement(door: DoorTarget, token: string, sql: string): Promise<string | undefined> {
  const client = pgClient(door, token);
  await client.connect();
  try {
    await client.query(sql);
    return undefined;
  } catch (error) {
    return String((error as { code?: unknown }).code);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** `promise`, or 'pending' when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([promise, sleep(ms).then(() => 'pending' as const)]);
}

// No clock is asserted: the admin is answered while every runaway is still in flight (none has ended yet), and
// each runaway ends by its limit's refusal.
test(`with ${RUNAWAYS} runaways of an analyst in flight, the admin's query endpoint and door statement answer before any of them ends; each runaway ends with 57014 or 57P01`, async ({ service, door }) => {
  let ended = 0;
  const runaways = Array.from({ length: RUNAWAYS }, () => doorStatement(door, ANALYST_TOKEN, RUNAWAY_SQL).finally(() => (ended += 1)));
  // every runaway accepted, the first one running
  await sleep(1_000);

  const endpoint = await within(fetch(`${service.url}/api/v1/query/perform/customer_orders`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ customerId: 7 }),
  }).then(async (response) => ({ status: response.status, body: await response.text(), ended })), HANG_MS);
  assert.ok(endpoint !== 'pending', `the admin's query endpoint did not answer within ${HANG_MS} ms`);
  assert.is(endpoint.status, 200, endpoint.body);
  assert.is(endpoint.ended, 0, `the admin's query endpoint answered only once ${endpoint.ended} runaways had ended`);

  const statement = await within(doorStatement(door, ADMIN_TOKEN, 'select count(*) as n from sales.customers').then((code) => ({ code, ended })), HANG_MS);
  assert.ok(statement !== 'pending', `the admin's door statement did not answer within ${HANG_MS} ms`);
  assert.is(statement.code, undefined);
  assert.is(statement.ended, 0, `the admin's door statement answered only once ${statement.ended} runaways had ended`);

  const outcomes = await Promise.all(runaways.map((runaway) => within(runaway, HANG_MS)));
  for (const code of outcomes) {
    assert.ok(code !== 'pending', `a runaway had no answer ${HANG_MS} ms after it was sent`);
    assert.ok(code === '57014' || code === '57P01', `a runaway ended with ${code}`);
  }
});

test('once the runaways are over, the analyst is served again (after its lane\'s suspension, docs/configuration.md)', async ({ door }) => {
  const until = Date.now() + 30_000;
  let last: string | undefined;
  do last = await doorStatement(door, ANALYST_TOKEN, 'select count(*) as n from sales.orders');
  while (last === '57014' && Date.now() < until);
  assert.is(last, undefined);
});

test.run();
