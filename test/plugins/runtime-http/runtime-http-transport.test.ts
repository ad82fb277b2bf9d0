import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ServiceError, StartupError, UnavailableError, UpstreamError } from '../../../core/plugin-api/errors.js';
import { ExtensionRegistries } from '../../../core/plugins/extension-registry.js';
import { loadPlugins } from '../../../core/plugins/plugin-loader.js';
import type { RuntimeTaskRef, RuntimeTransport } from '../../../core/plugin-api/runtime-transport.js';
import type { TaskAdvanceDocument, TaskStartDocument } from '../../../core/plugin-api/task-documents.js';
import { httpRuntimeTransport, type HttpTransportOptions } from '../../../plugins/runtime-http/runtime-http-transport.js';
import type { ResilienceTuning } from '../../../plugins/runtime-http/runtime-resilience.js';
import { FakeRuntime, snapshotFor } from './fake-runtime.js';

const TOKEN = 'service-token-0123456789';
/** Names that need encoding in a path: a space, a slash, a question mark. */
const ref: RuntimeTaskRef = { instanceId: 'host a:8282', vdb: 'sales/eu', version: '1.0?', taskId: 't-1' };
const taskPath = '/instances/host%20a%3A8282/vdbs/sales%2Feu/versions/1.0%3F/tasks/t-1';
/** Short waits so that retries cost milliseconds; a breaker that only the breaker tests reach. */
const FAST: ResilienceTuning = { retries: 2, initialDelayMs: 1, maxDelayMs: 5, breakerThreshold: 100, halfOpenAfterMs: 50 };

const start = { format: 'service-task-start', taskId: 't-1', goal: 'revenue by region' } as unknown as TaskStartDocument;
const advance: TaskAdvanceDocument = {
  format: 'service-task-advance',
  formatVersion: 1,
  taskId: 't-1',
  sequence: 1,
  observations: [{ actionId: 'r1a1', status: 'ok', columns: [{ name: 'one', logicalType: 'integer' }], rows: [{ one: 1 }], rowCount: 1, truncated: false, error: null }],
};

interface Context {
  fake: FakeRuntime;
  transports: RuntimeTransport[];
}

function transportOf(context: Context, settings: { timeoutMs?: number; bearerToken?: string | null } = {}, options: HttpTransportOptions = {}): RuntimeTransport {
  const transport = httpRuntimeTransport(
    { baseURL: context.fake.url, timeoutMs: settings.timeoutMs ?? 2000, bearerToken: settings.bearerToken === null ? undefined : settings.bearerToken ?? TOKEN },
    { ...options, tuning: { ...FAST, ...options.tuning } },
  );
  context.transports.push(transport);
  return transport;
}

/** The ServiceError a call rejects with. */
async function failure(call: Promise<unknown>): Promise<ServiceError> {
  try {
    await call;
  } catch (error) {
    assert.instance(error, ServiceError);
    return error as ServiceError;
  }
  throw new Error('expected the call to fail');
}

function withSuite(name: string): ReturnType<typeof suite<Context>> {
  const test = suite<Context>(name, { fake: undefined as unknown as FakeRuntime, transports: [] });
  test.before(async (context) => {
    context.fake = await FakeRuntime.start({ basePath: '/runtime' });
  });
  test.before.each((context) => {
    context.fake.reset();
  });
  test.after.each(async (context) => {
    await Promise.all(context.transports.splice(0).map((transport) => transport.close?.()));
  });
  test.after(async (context) => {
    await context.fake.close();
  });
  return test;
}

// ---------------------------------------------------------------------------------------------------
const operations = withSuite('http runtime transport: the four operations');

operations('start: PUT to the encoded task path beneath the base URL, with the service token and the document', async (context) => {
  const snapshot = await transportOf(context).start(ref, start);
  const [call] = context.fake.requests;
  assert.is(context.fake.requests.length, 1);
  assert.is(call?.method, 'PUT');
  assert.is(call?.path, taskPath);
  assert.equal(call?.ref, ref);
  assert.is(call?.headers.authorization, `Bearer ${TOKEN}`);
  assert.match(String(call?.headers['content-type']), /^application\/json/);
  assert.equal(call?.body, start);
  assert.equal(snapshot, snapshotFor(ref));
});

operations('advance: POST .../advances with the observations; a working answer brings its pending actions', async (context) => {
  context.fake.script = [{ kind: 'working', actions: 2 }];
  const snapshot = await transportOf(context).advance(ref, advance);
  const [call] = context.fake.calls('advance');
  assert.is(call?.method, 'POST');
  assert.is(call?.path, `${taskPath}/advances`);
  assert.equal(call?.body, advance);
  assert.is(snapshot.state, 'working');
  assert.equal(snapshot.pendingActions.map((action) => action.actionId), ['r1a1', 'r1a2']);
});

operations('read: GET without a body; cancel: DELETE answers the cancelled snapshot', async (context) => {
  const transport = transportOf(context);
  assert.is((await transport.read(ref)).state, 'completed');
  assert.is((await transport.cancel(ref)).state, 'cancelled');
  assert.equal(context.fake.requests.map((request) => [request.method, request.path, request.body]), [
    ['GET', taskPath, undefined],
    ['DELETE', taskPath, undefined],
  ]);
});

operations('without a bearer token no Authorization header is sent', async (context) => {
  await transportOf(context, { bearerToken: null }).read(ref);
  assert.is(context.fake.requests[0]?.headers.authorization, undefined);
});

operations('a snapshot without pendingActions comes back with none', async (context) => {
  const { pendingActions: _none, ...terminal } = snapshotFor(ref);
  context.fake.script = [{ kind: 'json', body: terminal }];
  assert.equal((await transportOf(context).read(ref)).pendingActions, []);
});

operations('a huge request of observations passes through: the service budgets limit it, not the transport', async (context) => {
  context.fake.script = [{ kind: 'working', actions: 1000, maxRows: 1e9 }];
  const snapshot = await transportOf(context).start(ref, start);
  assert.is(snapshot.pendingActions.length, 1000);
  assert.is(snapshot.pendingActions[999]?.maxRows, 1e9);
});

operations.run();

// ---------------------------------------------------------------------------------------------------
const failures = withSuite('http runtime transport: retries and failures');

failures('a transient 500 is retried, then the snapshot is returned', async (context) => {
  context.fake.script = [{ kind: 'status', status: 500 }, { kind: 'ok' }];
  const snapshot = await transportOf(context).start(ref, start);
  assert.is(snapshot.state, 'completed');
  assert.is(context.fake.calls('start').length, 2);
  assert.equal(context.fake.requests[1]?.body, start);
});

failures('429 and a dropped connection are retried too', async (context) => {
  context.fake.script = [{ kind: 'status', status: 429 }, { kind: 'drop' }, { kind: 'ok' }];
  assert.is((await transportOf(context).advance(ref, advance)).state, 'completed');
  assert.is(context.fake.calls('advance').length, 3);
});

failures('503 three times: runtime_unavailable after 3 attempts', async (context) => {
  context.fake.fallback = { kind: 'status', status: 503 };
  const error = await failure(transportOf(context).read(ref));
  assert.instance(error, UnavailableError);
  assert.is(error.code, 'runtime_unavailable');
  assert.is(error.message, 'the runtime is unavailable for read: answered 503 (3 attempts)');
  assert.is(context.fake.requests.length, 3);
});

failures('a 4xx is a refusal: runtime_failed at once, without retry', async (context) => {
  context.fake.fallback = { kind: 'status', status: 409 };
  const error = await failure(transportOf(context).start(ref, start));
  assert.instance(error, UpstreamError);
  assert.is(error.code, 'runtime_failed');
  assert.is(error.message, 'the runtime refused start: 409');
  assert.is(context.fake.requests.length, 1);
});

failures('a runtime that requires another token refuses with 401: runtime_failed', async (context) => {
  const protectedRuntime = await FakeRuntime.start({ requireToken: 'another-token-0123456789' });
  try {
    const transport = httpRuntimeTransport({ baseURL: protectedRuntime.url, timeoutMs: 2000, bearerToken: TOKEN }, { tuning: FAST });
    context.transports.push(transport);
    const error = await failure(transport.read(ref));
    assert.is(error.code, 'runtime_failed');
    assert.is(error.message, 'the runtime refused read: 401');
    assert.is(protectedRuntime.requests.length, 1);
  } finally {
    await protectedRuntime.close();
  }
});

failures('a malformed snapshot is a protocol error naming the first problems, not retried', async (context) => {
  context.fake.fallback = { kind: 'malformed' };
  const error = await failure(transportOf(context).read(ref));
  assert.instance(error, UpstreamError);
  assert.is(error.code, 'runtime_protocol_error');
  assert.match(error.message, /^the runtime answered read with an invalid snapshot: .*task: is required/);
  assert.match(error.message, /\(and \d+ more\)$/);
  assert.not.match(error.message, /thinking/);
  assert.is(context.fake.requests.length, 1);
});

failures('a working snapshot may leave out stop (read as null); a stopped one may not', async (context) => {
  const { stop: _stop, ...working } = snapshotFor(ref, { state: 'working', artifacts: [] });
  const { stop: _stopped, ...completed } = snapshotFor(ref);
  context.fake.script = [{ kind: 'json', body: working }, { kind: 'json', body: completed }];
  const transport = transportOf(context);
  const snapshot = await transport.read(ref);
  assert.equal([snapshot.state, snapshot.stop, snapshot.pendingActions], ['working', null, []]);
  const error = await failure(transport.read(ref));
  assert.is(error.code, 'runtime_protocol_error');
  assert.match(error.message, /stop: is required/);
});

failures('a snapshot of another task is a protocol error', async (context) => {
  context.fake.script = [{ kind: 'json', body: snapshotFor({ ...ref, taskId: 't-2' }) }];
  const error = await failure(transportOf(context).read(ref));
  assert.is(error.code, 'runtime_protocol_error');
  assert.is(error.message, 'the runtime answered read with a snapshot of another task');
});

failures('a body that is not a JSON object is a protocol error', async (context) => {
  context.fake.script = [{ kind: 'json', body: 'done' }];
  const error = await failure(transportOf(context).read(ref));
  assert.is(error.code, 'runtime_protocol_error');
  assert.match(error.message, /\(root\): must be object/);
});

failures('a body over the size limit is a protocol error, read no further', async (context) => {
  context.fake.script = [{ kind: 'working', actions: 200 }];
  const error = await failure(transportOf(context, {}, { maxBodyBytes: 4096 }).start(ref, start));
  assert.is(error.code, 'runtime_protocol_error');
  assert.is(error.message, 'the runtime answered start with more than 4096 bytes');
});

failures('a body over the size limit without Content-Length is cut off while reading', async (context) => {
  context.fake.script = [{ kind: 'json', body: { ...snapshotFor(ref), padding: 'x'.repeat(10_000) }, chunked: true }];
  const error = await failure(transportOf(context, {}, { maxBodyBytes: 4096 }).read(ref));
  assert.is(error.message, 'the runtime answered read with more than 4096 bytes');
});

failures('a runtime that hangs times out per attempt: runtime_unavailable', async (context) => {
  context.fake.fallback = { kind: 'hang' };
  const began = Date.now();
  const error = await failure(transportOf(context, { timeoutMs: 150 }, { tuning: { retries: 1 } }).read(ref));
  assert.is(error.code, 'runtime_unavailable');
  assert.is(error.message, 'the runtime is unavailable for read: no answer within 150 ms (2 attempts)');
  assert.is(context.fake.requests.length, 2);
  assert.ok(Date.now() - began < 1500, `took ${Date.now() - began} ms`);
});

failures('a runtime nobody listens for is unavailable', async (context) => {
  const gone = await FakeRuntime.start();
  await gone.close();
  const transport = httpRuntimeTransport({ baseURL: gone.url, timeoutMs: 2000, bearerToken: TOKEN }, { tuning: FAST });
  context.transports.push(transport);
  const error = await failure(transport.read(ref));
  assert.is(error.code, 'runtime_unavailable');
  assert.is(error.message, 'the runtime is unavailable for read: unreachable (3 attempts)');
});

failures.run();

// ---------------------------------------------------------------------------------------------------
const breaker = withSuite('http runtime transport: circuit breaker and close');

breaker('repeated failures open the circuit: the next call fails at once without a request', async (context) => {
  const transport = transportOf(context, {}, { tuning: { retries: 0, breakerThreshold: 3, halfOpenAfterMs: 60_000 } });
  context.fake.fallback = { kind: 'status', status: 500 };
  for (let call = 0; call < 3; call++) assert.is((await failure(transport.read(ref))).code, 'runtime_unavailable');
  assert.is(context.fake.requests.length, 3);

  context.fake.fallback = { kind: 'ok' };
  const error = await failure(transport.start(ref, start));
  assert.is(error.code, 'runtime_unavailable');
  assert.is(error.message, 'the runtime is unavailable for start: the circuit is open after repeated failures (0 attempts)');
  assert.is(context.fake.requests.length, 3);
});

breaker('the circuit counts attempts across retries, and ends the retries once open', async (context) => {
  const transport = transportOf(context, {}, { tuning: { retries: 2, breakerThreshold: 2, halfOpenAfterMs: 60_000 } });
  context.fake.fallback = { kind: 'status', status: 502 };
  const error = await failure(transport.read(ref));
  assert.match(error.message, /the circuit is open after repeated failures \(2 attempts\)$/);
  assert.is(context.fake.requests.length, 2);
});

breaker('after halfOpenAfter one trial call goes through, and its success closes the circuit', async (context) => {
  const transport = transportOf(context, {}, { tuning: { retries: 0, breakerThreshold: 1, halfOpenAfterMs: 50 } });
  context.fake.script = [{ kind: 'status', status: 500 }];
  await failure(transport.read(ref));
  assert.is((await failure(transport.read(ref))).code, 'runtime_unavailable');
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.is((await transport.read(ref)).state, 'completed');
  assert.is((await transport.read(ref)).state, 'completed');
  assert.is(context.fake.requests.length, 3);
});

breaker('refusals do not open the circuit: the runtime is up', async (context) => {
  const transport = transportOf(context, {}, { tuning: { retries: 0, breakerThreshold: 2 } });
  context.fake.script = [404, 409, 422, 400].map((status) => ({ kind: 'status', status }) as const);
  for (let call = 0; call < 4; call++) assert.is((await failure(transport.read(ref))).code, 'runtime_failed');
  assert.is((await transport.read(ref)).state, 'completed');
  assert.is(context.fake.requests.length, 5);
});

breaker('close ends a call in flight and refuses later ones without a request', async (context) => {
  context.fake.fallback = { kind: 'hang' };
  const transport = transportOf(context, { timeoutMs: 10_000 });
  const pending = failure(transport.read(ref));
  while (context.fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  await transport.close?.();
  const error = await pending;
  assert.is(error.code, 'runtime_unavailable');
  assert.match(error.message, /the transport is closed$/);
  assert.match((await failure(transport.read(ref))).message, /the transport is closed$/);
  assert.is(context.fake.requests.length, 1);
});

breaker.run();

// ---------------------------------------------------------------------------------------------------
const plugin = suite('http runtime transport: the plugin');

plugin('the built-in plugin registers the factory `http`, which needs a base URL', async () => {
  const extensions = new ExtensionRegistries();
  const registry = extensions.runtimeTransports;
  const manifestPath = fileURLToPath(new URL('../../../plugins/runtime-http/plugin.json', import.meta.url));
  const [loaded] = await loadPlugins(extensions, pino({ level: 'silent' }), [{ manifestPath, config: {}, builtIn: true }]);
  assert.is(loaded?.manifest.name, 'runtime-http');
  const factory = registry.get('http');
  assert.ok(factory);
  const transport = factory.create({ baseURL: 'http://127.0.0.1:9/runtime', timeoutMs: 1000, bearerToken: undefined });
  assert.type(transport.read, 'function');
  await transport.close?.();
  assert.throws(() => factory.create({ baseURL: undefined, timeoutMs: 1000, bearerToken: undefined }), (error: unknown) =>
    error instanceof StartupError && error.message === 'runtime.baseURL: required when runtime.transport is http');
});

plugin.run();
