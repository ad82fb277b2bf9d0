import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { validateRuntimeDocument } from '../../../core/tasks/runtime-documents.js';
import type { AuthorizedContext, RuntimeSnapshot } from '../../../core/plugin-api/task-documents.js';
import { MAX_BODY_BYTES, startReferenceRuntimeServer, type ReferenceServer } from '../../../plugins/runtime-reference/standalone.js';
import { demoConfig, projectRoot, writeBundle } from '../../support/test-service.js';
import { advanceDocument, artifactOf, observe, refOf, retailContext, startDocument, textOf } from './reference-fixtures.js';

const TOKEN = 'runtime-token-0123456789';

interface Context {
  retail: AuthorizedContext;
  server: ReferenceServer;
}

/** A runtime route of the test task; `suffix` e.g. `/advances`. */
function taskUrl(server: ReferenceServer, taskId: string, suffix = ''): string {
  return `${server.url}/instances/test-1/vdbs/retail/versions/1/tasks/${encodeURIComponent(taskId)}${suffix}`;
}

function call(url: string, init: { method?: string; body?: unknown; token?: string | null; rawBody?: string } = {}): Promise<Response> {
  const { method = 'GET', body, token = TOKEN, rawBody } = init;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers['authorization'] = `Bearer ${token}`;
  return fetch(url, { method, headers, ...(rawBody !== undefined ? { body: rawBody } : body === undefined ? {} : { body: JSON.stringify(body) }) });
}

async function errorOf(response: Response, status: number): Promise<{ code: string; message: string }> {
  assert.is(response.status, status);
  assert.is(response.headers.get('content-type'), 'application/json');
  const body = (await response.json()) as { code: string; message: string };
  assert.equal(validateRuntimeDocument('service-task-error', body), []);
  return body;
}

async function snapshotOf(response: Response): Promise<RuntimeSnapshot> {
  assert.is(response.status, 200);
  assert.is(response.headers.get('content-type'), 'application/json');
  const snapshot = (await response.json()) as RuntimeSnapshot;
  assert.equal(validateRuntimeDocument('service-task-snapshot', snapshot), []);
  return snapshot;
}

const server = suite<Context>('reference runtime: standalone HTTP server', { retail: undefined as unknown as AuthorizedContext, server: undefined as unknown as ReferenceServer });

server.before(async (context) => {
  context.retail = await retailContext();
  context.server = await startReferenceRuntimeServer({ host: '127.0.0.1', port: 0, bearerToken: TOKEN });
});

server.after(async ({ server: running }) => {
  await running.close();
});

server('without the token, or with a wrong one, every route is 401 with WWW-Authenticate', async ({ server: running, retail }) => {
  const url = taskUrl(running, 'auth');
  const start = startDocument(refOf('auth'), 'select 1', retail);
  for (const token of [null, 'runtime-token-0123456780', 'short', `${TOKEN}x`]) {
    const response = await call(url, { method: 'PUT', body: start, token });
    assert.is((await errorOf(response, 401)).code, 'unauthenticated');
    assert.is(response.headers.get('www-authenticate'), 'Bearer');
  }
  await errorOf(await call(`${running.url}/nowhere`, { token: null }), 401);
  // Nothing was started by those requests.
  await errorOf(await call(url), 404);
});

server('with the token: start, advance, read and cancel answer snapshots', async ({ server: running, retail }) => {
  const ref = refOf('http flow');
  const url = taskUrl(running, ref.taskId);
  const working = await snapshotOf(await call(url, { method: 'PUT', body: startDocument(ref, 'revenue by region', retail) }));
  assert.is(working.state, 'working');
  assert.equal(working.task.taskId, 'http flow');
  const action = working.pendingActions[0]!;
  const advance = advanceDocument(ref, 1, [await observe(action)]);
  const done = await snapshotOf(await call(`${url}/advances`, { method: 'POST', body: advance }));
  assert.is(done.state, 'completed');
  assert.match(textOf(artifactOf(done, 'answer')), '| region | revenue |');
  assert.equal(await snapshotOf(await call(`${url}/advances`, { method: 'POST', body: advance })), done);
  assert.equal(await snapshotOf(await call(url)), done);
  assert.equal(await snapshotOf(await call(url, { method: 'DELETE' })), done);

  const other = refOf('http cancel');
  await snapshotOf(await call(taskUrl(running, other.taskId), { method: 'PUT', body: startDocument(other, 'revenue', retail) }));
  assert.is((await snapshotOf(await call(taskUrl(running, other.taskId), { method: 'DELETE' }))).state, 'cancelled');
});

server('unknown tasks and routes are 404', async ({ server: running }) => {
  assert.is((await errorOf(await call(taskUrl(running, 'nobody')), 404)).code, 'task_not_found');
  assert.is((await errorOf(await call(taskUrl(running, 'nobody'), { method: 'DELETE' }), 404)).code, 'task_not_found');
  assert.is((await errorOf(await call(`${running.url}/instances/test-1/vdbs/retail/tasks/x`), 404)).code, 'route_not_found');
  assert.is((await errorOf(await call(taskUrl(running, 'nobody', '/advances')), 404)).code, 'route_not_found');
  assert.is((await errorOf(await call(taskUrl(running, 'nobody'), { method: 'POST', body: {} }), 404)).code, 'route_not_found');
});

server('a body that is not JSON, or not the document, is 400; advancing the wrong task is 400 too', async ({ server: running, retail }) => {
  const ref = refOf('bad-body');
  const url = taskUrl(running, ref.taskId);
  assert.is((await errorOf(await call(url, { method: 'PUT', rawBody: '{"format":' }), 400)).code, 'invalid_json');
  const wrongFormat = { ...startDocument(ref, 'select 1', retail), format: 'service-task-advance' };
  const wrong = await errorOf(await call(url, { method: 'PUT', body: wrongFormat }), 400);
  assert.is(wrong.message, 'not a valid service-task-start: format: must be "service-task-start"');
  const { authorizedContext: _missing, ...partial } = startDocument(ref, 'select 1', retail);
  assert.match((await errorOf(await call(url, { method: 'PUT', body: partial }), 400)).message, 'authorizedContext');
  await snapshotOf(await call(url, { method: 'PUT', body: startDocument(ref, 'select 1', retail) }));
  assert.match((await errorOf(await call(`${url}/advances`, { method: 'POST', body: { format: 'service-task-advance', formatVersion: 1, taskId: ref.taskId, sequence: 0, observations: [] } }), 400)).message, 'sequence');
  assert.is((await errorOf(await call(`${url}/advances`, { method: 'POST', body: advanceDocument(refOf('another'), 1, []) }), 400)).code, 'invalid_request');
});

server('a body over 2 MiB is 413, declared or streamed', async ({ server: running, retail }) => {
  const ref = refOf('huge');
  const huge = startDocument(ref, 'x'.repeat(MAX_BODY_BYTES), retail);
  assert.is((await errorOf(await call(taskUrl(running, ref.taskId), { method: 'PUT', body: huge }), 413)).code, 'request_too_large');
  const chunks = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let sent = 0; sent <= MAX_BODY_BYTES; sent += 64 * 1024) controller.enqueue(new Uint8Array(64 * 1024).fill(32));
      controller.close();
    },
  });
  const streamed = await fetch(taskUrl(running, ref.taskId), { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}` }, body: chunks, duplex: 'half' } as RequestInit);
  assert.is((await errorOf(streamed, 413)).code, 'request_too_large');
  // The server still answers afterwards.
  await errorOf(await call(taskUrl(running, ref.taskId)), 404);
});

// ---------------------------------------------------------------------------------------------------
const script = suite('reference runtime: npm run runtime');
const standalone = fileURLToPath(new URL('../../../plugins/runtime-reference/standalone.js', import.meta.url));

/** Runs the compiled standalone script with a config file; resolves on its first line of output or its exit. */
async function runScript(config: Record<string, unknown>): Promise<{ code: number | null; stdout: string; stderr: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [standalone, '--config', writeBundle(config)], { cwd: projectRoot, env: { ...process.env, VDB_CONFIG: '' } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const firstLine = new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.includes('\n')) resolve();
  }));
  await Promise.race([exited, firstLine]);
  return {
    code: child.exitCode,
    stdout,
    stderr,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

script('without runtime.bearerToken the script exits 1 with one line saying so', async () => {
  const run = await runScript(demoConfig());
  assert.is(run.code, 1);
  assert.is(run.stderr.trim(), 'runtime.bearerToken is required for the standalone runtime; set it (e.g. "${env:VDB_RUNTIME_TOKEN}")');
});

script('with a token it serves at runtime.reference and requires the token', async () => {
  const run = await runScript(demoConfig({ runtime: { bearerToken: TOKEN, reference: { host: '127.0.0.1', port: 0 } } }));
  try {
    const url = /listening on (http:\/\/\S+)/.exec(run.stdout)?.[1];
    assert.ok(url, run.stdout + run.stderr);
    assert.is((await fetch(`${url}/instances/i/vdbs/v/versions/1/tasks/t`)).status, 401);
    assert.is((await fetch(`${url}/instances/i/vdbs/v/versions/1/tasks/t`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
  } finally {
    await run.stop();
  }
});

server.run();
script.run();
