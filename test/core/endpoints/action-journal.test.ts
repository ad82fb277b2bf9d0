import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { forEachBackend, skippedHere } from '../../support/backends.js';
import { startTestService, type TestService } from '../../support/test-service.js';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { actionBundleFiles, admin, call, CLERK_TOKEN, crashTables, NEW_QTY, OLD_QTY, stateOf } from '../../faults/action-bundle.js';

/**
 * The journal of action runs (docs/actions.md): what it records, the admin routes that show it,
 * `Idempotency-Key`, a compensation that cannot succeed, and that a caller's database role can neither read
 * nor forge it. Crashes and recovery: test/faults/action-crash.test.ts.
 */
/** What the test reads of an OpenAPI operation. */
interface Operation {
  parameters: { name: string; in: string }[];
  responses: Record<string, { content: Record<string, { examples: Record<string, unknown> }> } | undefined>;
}

forEachBackend((backend) => {
  const test = suite<{ service: TestService; raw: Datasource; schema: string }>(`${backend.name}: the journal of action runs`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.schema = backend.family === 'mysql' ? backend.database : 'crash';
    context.raw = await backend.open();
    for (const statement of crashTables(backend.family, context.schema)) await context.raw.query(statement, []);
    const { config, files } = actionBundleFiles(backend.datasourceConfig, context.schema, 'journal-1');
    context.service = await startTestService({ config, files, datasources: { db: context.raw } });
  });

  test.after(async ({ service, raw, schema }) => {
    await service?.close();
    for (const table of ['crash_shipments', 'crash_orders', 'crash_stock']) await raw?.query(`drop table if exists ${schema}.${table}`, []).catch(() => undefined);
    if (backend.closeAfter) await raw?.close();
  });

  let next = 1000 * (1 + Math.floor(Math.random() * 1000));
  const place = async (service: TestService, options: { failing?: boolean; key?: string } = {}) => {
    const id = next++;
    const item = `item-${id}`;
    assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
    if (options.failing) assert.is((await call(service.url, 'actions/run', 'crash_ship_first', { id })).status, 200);
    const body = { id, item, oldQty: OLD_QTY, newQty: NEW_QTY, ready: 1 };
    const headers: Record<string, string> = options.key === undefined ? {} : { 'idempotency-key': options.key };
    return { id, item, body, headers };
  };
  /** Resolves with the error a statement was refused with; fails the test when it ran. */
  const refused = async (statement: Promise<unknown>): Promise<void> => {
    const outcome = await statement.then(() => 'ran', () => 'refused');
    assert.is(outcome, 'refused');
  };
  const runsOf = async (service: TestService, query: string) => (await admin(service.url, `actions/runs?${query}`)).body['runs'] as Record<string, unknown>[];

  test('a completed run: listed with its state, its steps with their times, outcomes and compensations', async ({ service }) => {
    const { id, body } = await place(service);
    const answer = await call(service.url, 'actions/run', 'crash_place', body);
    assert.is(answer.status, 200, JSON.stringify(answer.body));
    const listed = (await runsOf(service, 'action=crash_place&state=completed&limit=500')).find((run) => (run['run'] as string) !== undefined && run['state'] === 'completed');
    assert.ok(listed, 'the completed run is listed');
    const runs = await Promise.all((await runsOf(service, 'action=crash_place&limit=500')).map(async (run) => (await admin(service.url, `actions/runs/${String(run['run'])}`)).body));
    const run = runs.find((candidate) => (candidate['request'] as Record<string, unknown>)['id'] === id) as Record<string, unknown>;
    assert.is(run['state'], 'completed');
    assert.type(run['journal'], 'string');
    assert.equal((run['response'] as Record<string, unknown>)['ok'], true);
    const steps = run['steps'] as Record<string, unknown>[];
    assert.equal(steps.map((step) => [step['position'], step['name'], step['status'], step['affectedRows'], step['compensationStatus']]),
      [[0, 'reserve', 'done', 1, 'none'], [1, 'order', 'done', 1, 'none'], [2, 'ship', 'done', 1, 'none']]);
    for (const step of steps) {
      assert.ok(!Number.isNaN(Date.parse(String(step['doneAt']))), 'each step has its time');
      const compensation = step['compensation'] as Record<string, unknown>;
      assert.is(compensation['datasource'], run['journal']);
      assert.ok(String(compensation['sql']).length > 0);
    }
    assert.ok(!Number.isNaN(Date.parse(String(run['finishedAt']))));
  });

  test('a failed run: compensated in reverse, each compensation journaled, the run failed with its answer', async ({ service }) => {
    const { id, item, body } = await place(service, { failing: true });
    const answer = await call(service.url, 'actions/run', 'crash_place', body);
    assert.is(answer.status, 409, JSON.stringify(answer.body));
    assert.equal(await stateOf(service.url, id, item), { qty: OLD_QTY, orders: 0, shipments: 1 });
    const runs = await Promise.all((await runsOf(service, 'action=crash_place&state=failed&limit=500')).map(async (run) => (await admin(service.url, `actions/runs/${String(run['run'])}`)).body));
    const run = runs.find((candidate) => (candidate['request'] as Record<string, unknown>)['id'] === id) as Record<string, unknown>;
    assert.ok(run, 'the failed run is listed as failed');
    const steps = run['steps'] as Record<string, unknown>[];
    assert.equal(steps.map((step) => [step['name'], step['compensationStatus']]), [['reserve', 'compensated'], ['order', 'compensated']]);
    assert.is((run['response'] as Record<string, unknown>)['code'], 'operation_conflict');
  });

  test('Idempotency-Key: the same key and body answer the first answer without running again; another body 422', async ({ service }) => {
    const key = `key-${next}`;
    const { id, item, body, headers } = await place(service, { key });
    const first = await call(service.url, 'actions/run', 'crash_place', body, headers);
    assert.is(first.status, 200, JSON.stringify(first.body));
    // the second run would fail: the order exists; the first answer comes back instead
    const again = await call(service.url, 'actions/run', 'crash_place', body, headers);
    assert.is(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body, first.body);
    assert.equal(await stateOf(service.url, id, item), { qty: NEW_QTY, orders: 1, shipments: 1 });
    // the same fields in another order are the same body (a client's JSON library may write them so)
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again2 = await call(service.url, 'actions/run', 'crash_place', reordered, headers);
    assert.equal([again2.status, again2.body], [200, first.body]);
    const other = await call(service.url, 'actions/run', 'crash_place', { ...body, newQty: 3 }, headers);
    assert.is(other.status, 422);
    assert.is(other.body['code'], 'idempotency_key_reused');
    // the key is the caller's across actions: another action with it is another request, refused
    const otherAction = await call(service.url, 'actions/run', 'crash_ready', { id }, headers);
    assert.equal([otherAction.status, otherAction.body['code']], [422, 'idempotency_key_reused']);
    const invalid = await call(service.url, 'actions/run', 'crash_place', body, { 'idempotency-key': 'a key with spaces' });
    assert.is(invalid.status, 400);
    assert.is(invalid.body['code'], 'invalid_idempotency_key');
    // another caller's identical key is another request
    const byClerk = await call(service.url, 'actions/run', 'crash_place', body, { ...headers, authorization: `Bearer ${CLERK_TOKEN}` });
    assert.is(byClerk.status, 409, 'the clerk\'s request ran: the order exists');
  });

  test('Idempotency-Key: a failed first run is answered again with its error', async ({ service }) => {
    const { body, headers } = await place(service, { failing: true, key: `key-${next}` });
    const first = await call(service.url, 'actions/run', 'crash_place', body, headers);
    assert.is(first.status, 409);
    const again = await call(service.url, 'actions/run', 'crash_place', body, headers);
    assert.is(again.status, 409);
    assert.equal(again.body, first.body);
  });

  test('Idempotency-Key: a key is kept actions.idempotencyTtlSeconds; past it, the same request runs anew', async ({ raw, schema }) => {
    const { config, files } = actionBundleFiles(backend.datasourceConfig, schema, 'journal-ttl');
    const service = await startTestService({ config: { ...config, actions: { ...(config['actions'] as object), idempotencyTtlSeconds: 1 } }, files, datasources: { db: raw } });
    try {
      const { id, item, body, headers } = await place(service, { key: `key-${next}` });
      assert.is((await call(service.url, 'actions/run', 'crash_place', body, headers)).status, 200);
      await new Promise((done) => setTimeout(done, 1_500));
      // it runs again: the order exists, so this second run fails, and its reserve's rollback sets the stock back to oldQty
      const again = await call(service.url, 'actions/run', 'crash_place', body, headers);
      assert.equal([again.status, again.body['code']], [409, 'operation_conflict'], JSON.stringify(again.body));
      assert.equal(await stateOf(service.url, id, item), { qty: OLD_QTY, orders: 1, shipments: 1 });
    } finally {
      await service.close();
    }
  });

  // a second datasource of the server: PGlite has one database per process
  if (backend.name !== 'pglite') {
    test('actions.journal.datasource: every run is journaled there, each step started before its operation and done after; a failed run compensated', async ({ raw, schema }) => {
      const home = await backend.open('journal_home');
      const { config, files } = actionBundleFiles(backend.datasourceConfig, schema, 'journal-home');
      const service = await startTestService({
        config: { ...config, datasources: { ...(config['datasources'] as object), home: backend.datasourceConfig }, actions: { ...(config['actions'] as object), journal: { datasource: 'home' } } },
        files, datasources: { db: raw, home },
      });
      try {
        const done = await place(service);
        assert.is((await call(service.url, 'actions/run', 'crash_place', done.body)).status, 200);
        const failing = await place(service, { failing: true });
        assert.is((await call(service.url, 'actions/run', 'crash_place', failing.body)).status, 409);
        assert.equal(await stateOf(service.url, failing.id, failing.item), { qty: OLD_QTY, orders: 0, shipments: 1 });
        const runs = await Promise.all((await runsOf(service, 'action=crash_place&limit=500')).filter((run) => run['journal'] === 'journal_home')
          .map(async (run) => (await admin(service.url, `actions/runs/${String(run['run'])}`)).body));
        const runOf = (id: number) => runs.find((run) => (run['request'] as Record<string, unknown>)['id'] === id) as Record<string, unknown> | undefined;
        const [completed, failed] = [runOf(done.id), runOf(failing.id)];
        assert.equal([completed?.['state'], completed?.['journal']], ['completed', 'journal_home'], 'completed, on the home datasource\'s journal');
        assert.equal((completed?.['steps'] as Record<string, unknown>[]).map((step) => step['status']), ['done', 'done', 'done'], 'each step done after its operation');
        assert.is(failed?.['state'], 'failed');
        // the operation that failed was journaled started: its compensation is journaled too (it finds nothing to undo)
        assert.equal((failed?.['steps'] as Record<string, unknown>[]).map((step) => [step['name'], step['status'], step['compensationStatus']]),
          [['reserve', 'done', 'compensated'], ['order', 'done', 'compensated'], ['ship', 'started', 'none']]);
      } finally {
        await service.close();
        await home.close();
      }
    });
  }

  if (backend.name !== 'pglite') {
    test('Idempotency-Key: a begin that waited for the winner\'s uncommitted run answers that run, not "yours"', async ({ raw }) => {
      const secret = String((await raw.query('select secret from vdb_service.action_secret', [])).rows[0]?.['secret']);
      const key = `waited-${next++}`;
      const payload = (run: string) => JSON.stringify({ run, action: 'crash_place', request: {}, key, hash: 'h', instance: 'test', owner: run, lease: 30, ttl: 86400 });
      const call = 'select vdb_service.action_journal(?, ?, ?) as result';
      const winner = `${key}-winner`;
      let waited: Promise<unknown> | undefined;
      await raw.transaction(async (transaction) => {
        await transaction.query(call, [secret, 'begin', payload(winner)]);
        // the second begin waits on the winner's uncommitted row in the key's unique index until the commit
        waited = raw.query(call, [secret, 'begin', payload(`${key}-second`)]).then((result) => result.rows[0]?.['result']);
        await new Promise((resolve) => setTimeout(resolve, 300));
      });
      const answer = await waited;
      assert.ok(answer !== null && answer !== undefined, 'the second begin is told the key is taken');
      assert.is((typeof answer === 'string' ? JSON.parse(answer) : answer)['run'], winner);
      await raw.query('delete from vdb_service.action_runs where idempotency_key = ?', [key]);
    });
  }

  test('Idempotency-Key under concurrency: eight requests at once, one run; the others wait with 409 in flight or get its answer', async ({ service }) => {
    const { id, item, body, headers } = await place(service, { key: `key-${next}` });
    const answers = await Promise.all(Array.from({ length: 8 }, () => call(service.url, 'actions/run', 'crash_place', body, headers)));
    const statuses = answers.map((answer) => answer.status);
    assert.ok(answers.every((answer) => answer.status === 200 || (answer.status === 409 && answer.body['code'] === 'idempotency_key_in_flight')), JSON.stringify(answers.map((answer) => answer.body)));
    assert.ok(statuses.includes(200));
    const bodies = new Set(answers.filter((answer) => answer.status === 200).map((answer) => JSON.stringify(answer.body)));
    assert.is(bodies.size, 1, 'every 200 is the one run\'s answer');
    assert.equal(await stateOf(service.url, id, item), { qty: NEW_QTY, orders: 1, shipments: 1 });
    const runs = await Promise.all((await runsOf(service, 'action=crash_place&limit=500')).map(async (run) => (await admin(service.url, `actions/runs/${String(run['run'])}`)).body));
    assert.is(runs.filter((run) => (run['request'] as Record<string, unknown>)['id'] === id).length, 1, 'one run of the request');
  });

  test('a compensation that cannot succeed leaves the run needs_attention, with what a person needs, logged and counted', async ({ service }) => {
    const id = next++;
    const item = `item-${id}`;
    assert.is((await call(service.url, 'actions/run', 'crash_stock_add', { item, qty: OLD_QTY })).status, 200);
    assert.is((await call(service.url, 'actions/run', 'crash_ship_first', { id })).status, 200);
    const answer = await call(service.url, 'actions/run', 'crash_broken_undo', { id, item });
    assert.is(answer.status, 409);
    const listed = await runsOf(service, 'state=needs_attention&action=crash_broken_undo');
    assert.ok(listed.length >= 1, 'the run is listed as needs_attention');
    const run = (await admin(service.url, `actions/runs/${String(listed[0]?.['run'])}`)).body;
    assert.is(run['state'], 'needs_attention');
    // what a person needs, as recovery records it: the operation, the statement that would undo it, the database's reason
    const problem = run['problem'] as Record<string, unknown>;
    assert.is(problem['operation'], 'reserve', JSON.stringify(problem));
    assert.ok(String((problem['compensation'] as Record<string, unknown> | undefined)?.['sql']).includes('crash_shipments'), JSON.stringify(problem));
    assert.ok(String(problem['reason']).length > 0);
    const step = (run['steps'] as Record<string, unknown>[])[0] as Record<string, unknown>;
    assert.is(step['compensationStatus'], 'failed');
    assert.ok(String(step['problem']).length > 0);
    assert.ok(String((step['compensation'] as Record<string, unknown>)['sql']).length > 0, 'the statement that would undo it');
    assert.ok(service.logs.some((line) => line.includes('compensation failed')), 'logged');
    const metrics = await (await service.request('/observe/metrics')).text();
    assert.match(metrics, /vdb_action_runs_needing_attention_total\{action="crash_broken_undo"\} [1-9]/);
  });

  test('the admin routes: admins only, filters checked, an unknown run 404', async ({ service }) => {
    assert.is((await admin(service.url, 'actions/runs', CLERK_TOKEN)).status, 403);
    const bad = await admin(service.url, 'actions/runs?state=sleeping');
    assert.is(bad.status, 400);
    assert.is(bad.body['code'], 'invalid_request');
    const unknown = await admin(service.url, 'actions/runs/no-such-run');
    assert.is(unknown.status, 404);
    assert.is(unknown.body['code'], 'unknown_action_run');
    const openapi = await (await service.request('/api/v1/openapi.json')).json() as { paths: Record<string, Record<string, Operation>> };
    assert.ok(openapi.paths['/api/v1/admin/actions/runs'] && openapi.paths['/api/v1/admin/actions/runs/{id}'], 'both routes are in the OpenAPI document');
    const list = openapi.paths['/api/v1/admin/actions/runs']?.['get'];
    assert.equal(list?.parameters.map((parameter) => [parameter.name, parameter.in]), [['state', 'query'], ['action', 'query'], ['limit', 'query']]);
    assert.ok(openapi.paths['/api/v1/admin/actions/runs/{id}']?.['get']?.responses['404'], 'an unknown run is described');
    // the action route documents the header and the answers of a retried request
    const action = openapi.paths['/api/v1/actions/run/crash_place']?.['post'];
    assert.ok(action?.parameters.some((parameter) => parameter.name === 'Idempotency-Key' && parameter.in === 'header'), 'Idempotency-Key is a header of the action route');
    assert.ok(action?.responses['409']?.content['application/json'].examples['idempotency_key_in_flight'], '409 idempotency_key_in_flight');
    assert.ok(action?.responses['422']?.content['application/json'].examples['idempotency_key_reused'], '422 idempotency_key_reused');
  });

  test('the journal is the service\'s own: a caller\'s database role can neither read it nor write it without the secret', async ({ raw }) => {
    const wrongSecret = raw.query('select vdb_service.action_journal(?, ?, ?) as result', ['not-the-secret', 'list', '{"limit": 5}']);
    await refused(wrongSecret);
    if (backend.family === 'postgres') {
      const role = 'vdb_crash_v1_clerk';
      const asRole = (sql: string) => raw.transaction(async (transaction) => {
        await transaction.query(`set local role ${role}`, []);
        return transaction.query(sql, []);
      });
      await refused(asRole('select * from vdb_service.action_runs'));
      await refused(asRole('select * from vdb_service.action_secret'));
      await refused(asRole(`insert into vdb_service.action_steps (run_id, position, name, status) values ('x', 0, 'forged', 'done')`));
    } else {
      const grants = (await raw.query("show grants for 'vdb_crash_v1_clerk'@'%'", [])).rows.map((row) => String(Object.values(row)[0]));
      const onJournal = grants.filter((grant) => grant.includes('vdb_service'));
      assert.equal(onJournal.map((grant) => /^GRANT EXECUTE ON FUNCTION `vdb_service`\.`action_journal`/.test(grant)), [true], JSON.stringify(grants));
    }
  });

  test.run();
});
