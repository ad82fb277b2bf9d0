import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { skippedHere } from '../../support/backends.js';

/**
 * Bounded execution through the real service (docs/governed-execution.md#bounded-execution): results cut at
 * `server.maxResultBytes` (422) and at a task's `maxObservationBytes` (a truncated observation), statements
 * out of time answered 504 `statement_timeout`, and runaway statements of an analyst's tasks cancelled on
 * the server when their tasks end, the admin served meanwhile.
 */
export interface BoundedBackend {
  name: string;
  /** Why the backend is not available here; the suite is skipped. */
  skip?: string | undefined;
  /** A datasource of its own whose login may create roles and schemas; closed by `close`. */
  open(): Promise<Datasource>;
  close(datasource: Datasource): Promise<void>;
  /** The backend's SQL where the PostgreSQL family's (`POSTGRES_STATEMENTS`) does not run. */
  statements?: BoundedStatements;
  /** How many statements of the runaway tasks (those with `statements.mark`) the server still runs; absent where no other session can see them (PGlite). */
  runaways?(datasource: Datasource): Promise<number>;
}

/** The SQL of the suite on one backend. */
export interface BoundedStatements {
  /** The schema the VDB reads (its table `customers`: id, email, region). */
  schema: string;
  /** The VDB's name: database roles and users are named after it, server-wide. */
  vdb: string;
  setup: readonly string[];
  teardown: readonly string[];
  /** Two statements that run for minutes unless cancelled, each holding `mark`; the first is also a query endpoint's. */
  runaways: readonly [string, string];
  /** A statement whose rows stream for minutes as they are made, holding `mark`. */
  huge: string;
  /** Text found in the runaway statements only, to find them among those the server runs. */
  mark: string;
}

/** Runs for minutes unless cancelled: counting ten billion generated rows, or an unbounded recursion. */
export const RUNAWAY_MARK = '10000000000';
const PG_SCHEMA = 'bounded_test';

export const POSTGRES_STATEMENTS: BoundedStatements = {
  schema: PG_SCHEMA,
  vdb: 'bounded',
  setup: [
    `drop schema if exists ${PG_SCHEMA} cascade`,
    `create schema ${PG_SCHEMA}`,
    `create table ${PG_SCHEMA}.customers (id integer primary key, email text not null, region text not null)`,
    `insert into ${PG_SCHEMA}.customers select g, 'c' || g || '@example.com', case when g % 2 = 0 then 'North' else 'South' end from generate_series(1, 40) g`,
  ],
  teardown: [`drop schema if exists ${PG_SCHEMA} cascade`],
  runaways: [
    `select count(*) as n from generate_series(1, ${RUNAWAY_MARK}) g`,
    `with recursive r(n) as (select 1 union all select n + 1 from r where n < ${RUNAWAY_MARK}) select count(*) as n from r`,
  ],
  // rows of a recursive CTE stream as they are made (generate_series in FROM would materialize them all first)
  huge: `with recursive r(n) as (select 1 union all select n + 1 from r where n < ${RUNAWAY_MARK}) select n from r`,
  mark: RUNAWAY_MARK,
};

const MAX_RESULT_BYTES = 300;
const MAX_OBSERVATION_BYTES = 300;

function files({ schema, vdb, runaways, huge }: BoundedStatements): Record<string, string> {
  return {
    [`bundle/vdbs/${vdb}.yaml`]: `name: ${vdb}
version: "1"
datasource: retail_db
schemas: [{ name: ${schema} }]
dataRoles:
  - name: analyst
    grants: [{ resource: ${schema}.customers, allow: [select], columns: [id, region] }]
  - name: clerk
    grants: [{ resource: ${schema}, allow: [select, insert, update, delete] }]
`,
    'bundle/queries/bounded_regions.yaml': `---\ntype: sqlDirect\nvirtualDatabase: ${vdb}\nquery: select id, region from ${schema}.customers order by id\n`,
    'bundle/queries/bounded_one.yaml': `---\ntype: sqlDirect\nvirtualDatabase: ${vdb}\nneededFields: [id]\nquery: select id, region from ${schema}.customers where id = {{ id }}\n`,
    'bundle/queries/bounded_slow.yaml': `---\ntype: sqlDirect\nvirtualDatabase: ${vdb}\nquery: ${runaways[0]}\n`,
    'bundle/queries/bounded_huge.yaml': `---\ntype: sqlDirect\nvirtualDatabase: ${vdb}\nquery: ${huge}\n`,
  };
}

function config(): Record<string, unknown> {
  return {
    ...demoConfig({ descriptors: './bundle' }),
    server: { host: '127.0.0.1', port: 0, maxResultBytes: MAX_RESULT_BYTES, requestTimeoutMs: 8_000 },
    capabilities: [{ name: 'answer', budgets: { maxObservationBytes: MAX_OBSERVATION_BYTES, maxDurationSeconds: 2 } }],
  };
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

async function post(service: TestService, path: string, body: unknown, token: string): Promise<Reply> {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function artifact(snapshot: Record<string, unknown>, kind: string): string {
  const artifacts = snapshot['artifacts'] as { kind: string; content: { data: string } }[];
  return artifacts.filter((one) => one.kind === kind).map((one) => Buffer.from(one.content.data, 'base64').toString('utf8')).join('\n');
}

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

export function runBoundedSuite(backend: BoundedBackend): void {
  const test = suite<{ raw: Datasource; service: TestService }>(`${backend.name}: bounded execution through the service`);
  if (skippedHere(test, backend)) return;
  const statements = backend.statements ?? POSTGRES_STATEMENTS;
  const TASKS = `/api/v1/capabilities/answer/vdbs/${statements.vdb}/versions/1/tasks`;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of statements.setup) await context.raw.query(statement, []);
    context.service = await startTestService({ config: config(), files: files(statements), datasources: { retail_db: context.raw } });
  });
  test.after(async ({ raw, service }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw);
    for (const statement of statements.teardown) await raw.query(statement, []);
    await backend.close(raw);
  });

  test('a query endpoint whose result is over server.maxResultBytes answers 422 result_too_large with the limit; a smaller result answers', async ({ service }) => {
    const over = await post(service, '/api/v1/query/perform/bounded_regions', {}, ADMIN_TOKEN);
    assert.equal([over.status, over.body['code'], over.body['details']], [422, 'result_too_large', { limitBytes: MAX_RESULT_BYTES }], JSON.stringify(over.body));
    assert.match(String(over.body['message']), `the result is larger than ${MAX_RESULT_BYTES} bytes (server.maxResultBytes)`);
    const small = await post(service, '/api/v1/query/perform/bounded_one', { id: 2 }, ADMIN_TOKEN);
    assert.equal([small.status, small.body['rows']], [200, [{ id: 2, region: 'North' }]], JSON.stringify(small.body));
  });

  test('a task query over maxObservationBytes gives a truncated observation within the budget; the task completes', async ({ service }) => {
    const reply = await post(service, TASKS, { goal: `select id, region from ${statements.schema}.customers order by id` }, ANALYST_TOKEN);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.is(reply.body['state'], 'completed', JSON.stringify(reply.body));
    const usage = reply.body['usage'] as { observationRows: number; observationBytes: number };
    assert.ok(usage.observationBytes > 2 && usage.observationBytes <= MAX_OBSERVATION_BYTES, `observation bytes ${usage.observationBytes}`);
    assert.ok(usage.observationRows > 0 && usage.observationRows < 40, `observation rows ${usage.observationRows}`);
    assert.match(artifact(reply.body, 'answer'), '(the service cut the result short)');
  });

  test('a statement over server.requestTimeoutMs answers 504 statement_timeout; the datasource serves the next query', async ({ service }) => {
    const slow = await post(service, '/api/v1/query/perform/bounded_slow', {}, ADMIN_TOKEN);
    assert.equal([slow.status, slow.body['code']], [504, 'statement_timeout'], JSON.stringify(slow.body));
    const next = await post(service, '/api/v1/query/perform/bounded_one', { id: 3 }, ADMIN_TOKEN);
    assert.equal([next.status, next.body['rows']], [200, [{ id: 3, region: 'South' }]], JSON.stringify(next.body));
  });

  if (backend.runaways) {
    const runaways = backend.runaways;
    test('a result of ten billion rows is read as it streams, up to the budget: 422, and its statement no longer runs once answered', async ({ raw, service }) => {
      const huge = await post(service, '/api/v1/query/perform/bounded_huge', {}, ADMIN_TOKEN);
      assert.equal([huge.status, huge.body['code'], huge.body['details']], [422, 'result_too_large', { limitBytes: MAX_RESULT_BYTES }], JSON.stringify(huge.body));
      // the answer waits until the statement has ended (cancelled once cut), so no poll is needed
      assert.is(await runaways(raw), 0, 'the statement no longer runs');
    });

    test('a client that goes away cancels its query endpoint\'s statement on the server, long before its time limit', async ({ raw, service }) => {
      const logged = service.logs.length;
      const client = new AbortController();
      const request = service.request('/api/v1/query/perform/bounded_slow', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: client.signal })
        .then(() => 'answered', () => 'aborted');
      let running = 0;
      for (let tries = 0; running === 0 && tries < 50; tries += 1) {
        await pause(100);
        running = await runaways(raw);
      }
      assert.is(running, 1, 'the statement runs');
      client.abort();
      assert.is(await request, 'aborted');
      // server.requestTimeoutMs is 8 s: only the cancel ends the statement within these 3 s
      for (let tries = 0; running > 0 && tries < 30; tries += 1) {
        await pause(100);
        running = await runaways(raw);
      }
      assert.is(running, 0, 'no statement of the request still runs on the server');
      // the database's 57014 was the client's doing, not a timeout: logged at info, no error of the service's
      const lines = () => service.logs.slice(logged).map((line) => JSON.parse(line) as { msg?: string; level?: number });
      for (let tries = 0; tries < 50 && !lines().some((line) => line.msg === 'request ended: its client went away'); tries += 1) await pause(100);
      assert.ok(lines().some((line) => line.msg === 'request ended: its client went away'));
      assert.equal(lines().filter((line) => line.msg === 'request failed'), []);
    });
  }

  test('10 runaway tasks of the analyst in flight: the admin is served, health answers, each task ends at its deadline, its statement is cancelled and the analyst is served again', async ({ raw, service }) => {
    const tasks = Array.from({ length: 10 }, (_, index) => post(service, TASKS, { goal: statements.runaways[index % 2] }, ANALYST_TOKEN));
    await pause(500);
    // on PGlite, whose one connection the runaways hold in turn, the admin waits for the first to be cancelled at its deadline
    const admin = await post(service, '/api/v1/query/perform/bounded_one', { id: 4 }, ADMIN_TOKEN);
    assert.equal([admin.status, admin.body['rows']], [200, [{ id: 4, region: 'North' }]], JSON.stringify(admin.body));
    assert.is((await service.request('/observe/health', { token: null })).status, 200);

    for (const reply of await Promise.all(tasks)) {
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      assert.equal([reply.body['state'], (reply.body['stop'] as { reason: string }).reason], ['budget_exceeded', 'deadline_exceeded'], JSON.stringify(reply.body));
    }
    if (backend.runaways) {
      // the cancels are sent as the tasks end; without them the statements would run 30 s, to their time limit
      let running = await backend.runaways(raw);
      for (let tries = 0; running > 0 && tries < 50; tries += 1) {
        await pause(100);
        running = await backend.runaways(raw);
      }
      assert.is(running, 0, 'no statement of the runaway tasks still runs on the server');
    }
    const analyst = await post(service, '/api/v1/query/perform/bounded_one', { id: 5 }, ANALYST_TOKEN);
    assert.equal([analyst.status, analyst.body['rows']], [200, [{ id: 5, region: 'South' }]], JSON.stringify(analyst.body));
  });

  test.run();
}
