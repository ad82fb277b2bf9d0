import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConflictError, InputError, NotFoundError, ServiceError, UpstreamError } from '../../../core/plugin-api/errors.js';
import { ExtensionRegistries } from '../../../core/plugins/extension-registry.js';
import { loadPlugins } from '../../../core/plugins/plugin-loader.js';
import type { RuntimeTransport } from '../../../core/plugin-api/runtime-transport.js';
import { validateRuntimeDocument } from '../../../core/tasks/runtime-documents.js';
import type { AuthorizedContext, PendingAction, RuntimeSnapshot } from '../../../core/plugin-api/task-documents.js';
import { inProcessTransport } from '../../../plugins/runtime-reference/in-process-transport.js';
import { ReferenceRuntime } from '../../../plugins/runtime-reference/reference-runtime.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { advanceDocument, artifactOf, observe, refOf, retailContext, startDocument, statementOf, textOf } from './reference-fixtures.js';

interface Context {
  retail: AuthorizedContext;
  /** The runtime behind `transport`: its refusals are asserted on it, where they keep their class and code. */
  runtime: ReferenceRuntime;
  transport: RuntimeTransport;
}

/** A snapshot must pass the published schema, as the service checks it. */
function valid(snapshot: RuntimeSnapshot): RuntimeSnapshot {
  assert.equal(validateRuntimeDocument('service-task-snapshot', snapshot), []);
  return snapshot;
}

/** The ServiceError a call of the runtime throws. */
function refusal(call: () => unknown): ServiceError {
  try {
    call();
  } catch (error) {
    assert.instance(error, ServiceError);
    return error as ServiceError;
  }
  throw new Error('expected the call to fail');
}

const runtime = suite<Context>('reference runtime: in process', {
  retail: undefined as unknown as AuthorizedContext, runtime: undefined as unknown as ReferenceRuntime, transport: undefined as unknown as RuntimeTransport,
});

runtime.before(async (context) => {
  context.retail = await retailContext();
});

runtime.before.each((context) => {
  context.runtime = new ReferenceRuntime();
  context.transport = inProcessTransport(context.runtime);
});

runtime('start asks for the compiled query; advance with its real result completes with table, answer and query artifacts', async ({ retail, transport }) => {
  const ref = refOf('flow');
  const working = valid(await transport.start(ref, startDocument(ref, 'revenue by region', retail)));
  assert.is(working.state, 'working');
  assert.is(working.stop, null);
  assert.equal(working.task, { taskId: 'flow', target: { instanceId: 'test-1', vdbName: 'retail', vdbVersion: '1' } });
  assert.equal(working.usage, { inputTokens: 0, outputTokens: 0, modelCalls: 0 });
  assert.is(working.pendingActions.length, 1);
  const action = working.pendingActions[0]!;
  assert.equal({ actionId: action.actionId, kind: action.kind, maxRows: action.maxRows }, { actionId: 'q1', kind: 'semanticQuery', maxRows: 1000 });

  const observation = await observe(action);
  const done = valid(await transport.advance(ref, advanceDocument(ref, 1, [observation])));
  assert.is(done.state, 'completed');
  assert.equal(done.stop, { reason: 'completed', detail: '' });
  assert.equal(done.pendingActions, []);
  assert.equal(done.artifacts.map((artifact) => [artifact.id, artifact.kind, artifact.content.contentType]), [
    ['a1', 'answer', 'text/markdown'], ['a2', 'table', 'application/json'], ['a3', 'table', 'text/csv'], ['a4', 'query', 'application/vnd.vdb.semantic-query+json'],
  ]);

  const table = JSON.parse(textOf(artifactOf(done, 'table', 'application/json'))) as { columns: unknown; rows: unknown };
  const statement = await statementOf(action);
  const expected = await (await sharedPglite()).query(statement.sql, statement.params);
  assert.equal(table, { columns: expected.columns, rows: expected.rows });
  assert.equal(expected.columns.map((column) => column.name), ['region', 'revenue']);
  assert.ok(expected.rows.length >= 2);
  const csv = textOf(artifactOf(done, 'table', 'text/csv')).split('\r\n');
  assert.is(csv[0], 'region,revenue');
  assert.is(csv.length, expected.rows.length + 2);
  const answer = textOf(artifactOf(done, 'answer'));
  assert.match(answer, `**revenue by region**: ${expected.rows.length} rows.`);
  assert.match(answer, '| region | revenue |');
  assert.equal(JSON.parse(textOf(artifactOf(done, 'query'))), action.kind === 'semanticQuery' ? action.query : undefined);
  assert.equal(await transport.read(ref), done);
});

runtime('maxRows is the row budget when that is below 1000, and at least one', async ({ retail, transport }) => {
  const budgets = (maxObservationRows: number) => ({ ...startDocument(refOf('x'), '', retail).budgets, maxObservationRows });
  const small = await transport.start(refOf('small'), startDocument(refOf('small'), 'select 1 AS one', retail, { budgets: budgets(7) }));
  const none = await transport.start(refOf('none'), startDocument(refOf('none'), 'select 1 AS one', retail, { budgets: budgets(0) }));
  assert.is(small.pendingActions[0]?.maxRows, 7);
  assert.is(none.pendingActions[0]?.maxRows, 1);
});

runtime('start is idempotent by task: a second start answers the current snapshot and plans nothing new', async ({ retail, transport }) => {
  const ref = refOf('twice');
  const first = await transport.start(ref, startDocument(ref, 'revenue by region', retail));
  assert.equal(await transport.start(ref, startDocument(ref, 'select 1', retail)), first);
  const done = await transport.advance(ref, advanceDocument(ref, 1, [await observe(first.pendingActions[0]!)]));
  assert.equal(await transport.start(ref, startDocument(ref, 'revenue by region', retail)), done);
});

runtime('advance is idempotent by sequence: a repeated sequence answers its snapshot without applying anything twice', async ({ retail, runtime: reference, transport }) => {
  const ref = refOf('advance-twice');
  const working = await transport.start(ref, startDocument(ref, 'order count by status', retail));
  const advance = advanceDocument(ref, 1, [await observe(working.pendingActions[0]!)]);
  const done = await transport.advance(ref, advance);
  assert.equal(await transport.advance(ref, advance), done);
  assert.is((await transport.read(ref)).artifacts.length, 4);
  const next = refusal(() => reference.advance(ref, advanceDocument(ref, 2, advance.observations)));
  assert.instance(next, ConflictError);
  assert.is(next.code, 'task_not_working');
  const skipped = refusal(() => reference.advance(ref, advanceDocument(ref, 5, advance.observations)));
  assert.instance(skipped, ConflictError);
  assert.is(skipped.code, 'sequence_out_of_order');
});

runtime('a denied or failed observation fails the task with its message, explained in the answer', async ({ retail, transport }) => {
  for (const status of ['denied', 'failed'] as const) {
    const ref = refOf(`obs-${status}`);
    await transport.start(ref, startDocument(ref, 'select email from sales.customers', retail));
    const error = { code: 'forbidden_column', message: 'sales.customers.email is not granted' };
    const failed = valid(await transport.advance(ref, advanceDocument(ref, 1, [{ actionId: 'q1', status, columns: [], rows: [], rowCount: 0, truncated: false, error }])));
    assert.is(failed.state, 'failed');
    assert.equal(failed.stop, { reason: 'runtime_failed', detail: 'sales.customers.email is not granted' });
    assert.is(textOf(artifactOf(failed, 'answer')), `The query could not run (${status}, forbidden_column): sales.customers.email is not granted`);
    assert.is(textOf(artifactOf(failed, 'query')), 'select email from sales.customers');
  }
});

runtime('an advance without the observation of the pending action is refused', async ({ retail, runtime: reference, transport }) => {
  const ref = refOf('wrong-action');
  await transport.start(ref, startDocument(ref, 'select 1 AS one', retail));
  const error = refusal(() => reference.advance(ref, advanceDocument(ref, 1, [{ actionId: 'other', status: 'ok', columns: [], rows: [], rowCount: 0, truncated: false, error: null }])));
  assert.instance(error, InputError);
  assert.is(error.code, 'invalid_request');
  assert.is((await transport.read(ref)).state, 'working');
});

runtime('a goal the model does not cover stops at input_required with an answer listing what it knows', async ({ retail, transport }) => {
  const ref = refOf('unknown-goal');
  const snapshot = valid(await transport.start(ref, startDocument(ref, 'how is the weather?', retail)));
  assert.is(snapshot.state, 'input_required');
  assert.is(snapshot.stop?.reason, 'input_required');
  assert.match(snapshot.stop?.detail ?? '', 'revenue');
  assert.equal(snapshot.pendingActions, []);
  assert.equal(snapshot.artifacts.map((artifact) => [artifact.id, artifact.kind, artifact.content.contentType]), [['a1', 'answer', 'text/markdown']]);
  assert.match(textOf(artifactOf(snapshot, 'answer')), '- revenue');
});

runtime('an unknown capability, or no data access, fails at start', async ({ retail, transport }) => {
  const other = valid(await transport.start(refOf('cap'), startDocument(refOf('cap'), 'revenue', retail, { capability: 'summarize' })));
  assert.is(other.state, 'failed');
  assert.is(other.capability, 'summarize');
  assert.equal(other.stop, { reason: 'runtime_failed', detail: 'unknown capability "summarize": the reference runtime offers answer' });
  const blind = valid(await transport.start(refOf('blind'), startDocument(refOf('blind'), 'revenue', { ...retail, access: 'unavailable' })));
  assert.is(blind.state, 'failed');
  assert.match(blind.stop?.detail ?? '', 'no data access');
});

runtime('cancel stops a working task and leaves a stopped one as it is', async ({ retail, runtime: reference, transport }) => {
  const ref = refOf('cancel');
  await transport.start(ref, startDocument(ref, 'revenue by region', retail));
  const cancelled = valid(await transport.cancel(ref));
  assert.is(cancelled.state, 'cancelled');
  assert.equal(cancelled.stop, { reason: 'cancelled', detail: 'cancelled by the service' });
  assert.equal(cancelled.pendingActions, []);
  assert.equal(await transport.cancel(ref), cancelled);
  const late = refusal(() => reference.advance(ref, advanceDocument(ref, 1, [])));
  assert.is(late.code, 'task_not_working');

  const stopped = refOf('cancel-stopped');
  const input = await transport.start(stopped, startDocument(stopped, 'weather', retail));
  assert.equal(await transport.cancel(stopped), input);
});

runtime('an unknown task is task_not_found for read, advance and cancel; a task is known only under its full path', async ({ retail, runtime: reference }) => {
  const ref = refOf('known');
  reference.start(ref, startDocument(ref, 'select 1', retail));
  for (const unknown of [refOf('nobody'), { ...ref, instanceId: 'test-2' }, { ...ref, version: '2' }]) {
    for (const call of [() => reference.read(unknown), () => reference.cancel(unknown), () => reference.advance(unknown, advanceDocument(unknown, 1, []))]) {
      const error = refusal(call);
      assert.instance(error, NotFoundError);
      assert.is(error.code, 'task_not_found');
    }
  }
});

runtime('a start document naming another task than its path is refused', ({ retail, runtime: reference }) => {
  const error = refusal(() => reference.start(refOf('a'), startDocument(refOf('b'), 'select 1', retail)));
  assert.instance(error, InputError);
});

runtime('through the transport a refusal is runtime_failed, as a runtime\'s 4xx is over HTTP, keeping its cause', async ({ transport }) => {
  try {
    await transport.read(refOf('nobody'));
    assert.unreachable('the read should fail');
  } catch (error) {
    assert.instance(error, UpstreamError);
    assert.is((error as UpstreamError).code, 'runtime_failed');
    assert.match((error as UpstreamError).message, /^the runtime refused read: no task nobody /);
    assert.instance((error as UpstreamError).cause, NotFoundError);
  }
});

runtime('documents cross by value: changing what went in or came out changes nothing in the runtime', async ({ retail, transport }) => {
  const ref = refOf('by-value');
  const document = startDocument(ref, 'revenue by region', retail);
  const snapshot = await transport.start(ref, document);
  const action = snapshot.pendingActions[0] as Extract<PendingAction, { kind: 'semanticQuery' }>;
  action.query.measures = [];
  document.authorizedContext.semantic = null;
  const kept = (await transport.read(ref)).pendingActions[0] as Extract<PendingAction, { kind: 'semanticQuery' }>;
  assert.equal(kept.query.measures, [{ metric: 'revenue' }]);
});

runtime('the oldest tasks are forgotten beyond the table\'s size', ({ retail }) => {
  const small = new ReferenceRuntime(2);
  for (const taskId of ['t1', 't2', 't3']) small.start(refOf(taskId), startDocument(refOf(taskId), 'select 1', retail));
  assert.is(refusal(() => small.read(refOf('t1'))).code, 'task_not_found');
  assert.is(small.read(refOf('t3')).state, 'working');
});

runtime('the built-in plugin registers the transport `inProcess`', async ({ retail }) => {
  const extensions = new ExtensionRegistries();
  const registry = extensions.runtimeTransports;
  const manifestPath = fileURLToPath(new URL('../../../plugins/runtime-reference/plugin.json', import.meta.url));
  const [loaded] = await loadPlugins(extensions, pino({ level: 'silent' }), [{ manifestPath, config: {}, builtIn: true }]);
  assert.is(loaded?.manifest.name, 'runtime-reference');
  const transport = registry.get('inProcess')?.create({ baseURL: undefined, timeoutMs: 1000, bearerToken: undefined });
  assert.ok(transport);
  assert.is((await transport.start(refOf('plugin'), startDocument(refOf('plugin'), 'select 1', retail))).state, 'working');
});

runtime.run();
