import 'reflect-metadata';
import { Writable } from 'node:stream';
import type { Request, Response } from 'restify';
import { container } from 'tsyringe';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConflictError, UnavailableError } from '../../../core/plugin-api/errors.js';
import { createLogger } from '../../../core/logging.js';
import { readBody } from '../../../core/server/body-parsing.js';
import { HttpListeners } from '../../../core/server/http-server.js';
import type { RouteModule } from '../../../core/server/route-module.js';

const MAX_BODY = 2048;
const logs: string[] = [];
const sink = new Writable({ write(chunk: Buffer, _encoding, done) { logs.push(chunk.toString()); done(); } });

/** Test routes on the real server stack: body reading and parsing, and the error handler. */
const probeRoutes: RouteModule = {
  name: 'probe',
  listener: 'main',
  register(server) {
    server.post('/echo', async (req: Request, res: Response) => {
      res.json(200, { body: (await readBody(req, MAX_BODY)) ?? null });
    });
    server.get('/fail/conflict', async () => {
      throw new ConflictError('operation_conflict', 'order 7 already exists', { details: { table: 'orders' } });
    });
    server.get('/fail/unavailable', async () => {
      throw new UnavailableError('datasource_unavailable', 'datasource retail_db is unavailable');
    });
    server.get('/fail/bug', async () => {
      throw new Error('secret=hunter2 at /srv/app.js:12');
    });
  },
};

const serverConfig = { host: '127.0.0.1', port: 0, maxBodyBytes: MAX_BODY, requestTimeoutMs: 5000, keepAliveTimeoutMs: 65_000, maxResultBytes: 16_777_216 };
const edge = suite<{ listeners: HttpListeners }>('server edge: bodies and errors');

edge.before(async (context) => {
  context.listeners = HttpListeners.build(serverConfig, [probeRoutes], container.createChildContainer(), createLogger('info', sink));
  await context.listeners.listen(serverConfig);
});
edge.after(async ({ listeners }) => {
  await listeners.close(1000);
});

async function post(listeners: HttpListeners, contentType: string, body: string) {
  const response = await fetch(`${listeners.url}/echo`, { method: 'POST', headers: { 'content-type': contentType }, body });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

edge('reads a JSON body', async ({ listeners }) => {
  const result = await post(listeners, 'application/json; charset=utf-8', '{"customerId": 7, "tags": ["a"]}');
  assert.equal(result, { status: 200, body: { body: { customerId: 7, tags: ['a'] } } });
});

for (const type of ['application/yaml', 'application/x-yaml', 'text/yaml']) {
  edge(`reads a YAML body sent as ${type}`, async ({ listeners }) => {
    const result = await post(listeners, type, 'customerId: 7\nactive: true\nnote: null\n');
    assert.equal(result.body, { body: { customerId: 7, active: true, note: null } });
  });
}

edge('415 unsupported_media_type for any other type', async ({ listeners }) => {
  const result = await post(listeners, 'text/plain', 'customerId=7');
  assert.is(result.status, 415);
  assert.is(result.body['code'], 'unsupported_media_type');
});

edge('413 body_too_large past maxBodyBytes', async ({ listeners }) => {
  const result = await post(listeners, 'application/json', JSON.stringify({ text: 'x'.repeat(MAX_BODY) }));
  assert.is(result.status, 413);
  assert.is(result.body['code'], 'body_too_large');
});

edge('400 invalid_body for malformed JSON and YAML', async ({ listeners }) => {
  assert.is((await post(listeners, 'application/json', '{"a": ')).body['code'], 'invalid_body');
  assert.is((await post(listeners, 'application/yaml', 'a: [1, 2\nb: }')).body['code'], 'invalid_body');
});

edge('YAML alias expansion is bounded (billion laughs)', async ({ listeners }) => {
  const levels = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let level = 1; level < 9; level++) {
    const previous = String.fromCharCode(96 + level);
    const current = String.fromCharCode(97 + level);
    levels.push(`${current}: &${current} [${Array(9).fill(`*${previous}`).join(',')}]`);
  }
  const result = await post(listeners, 'application/yaml', levels.join('\n'));
  assert.is(result.status, 400);
  assert.is(result.body['code'], 'invalid_body');
});

edge('deeply nested bodies are refused', async ({ listeners }) => {
  const result = await post(listeners, 'application/json', `${'['.repeat(100)}${']'.repeat(100)}`);
  assert.is(result.status, 400);
});

edge('domain errors map to status and {code, message, details}', async ({ listeners }) => {
  const conflict = await fetch(`${listeners.url}/fail/conflict`);
  assert.is(conflict.status, 409);
  assert.equal(await conflict.json(), { code: 'operation_conflict', message: 'order 7 already exists', details: { table: 'orders' } });
  const unavailable = await fetch(`${listeners.url}/fail/unavailable`);
  assert.is(unavailable.status, 503);
  assert.is((await unavailable.json() as { code: string }).code, 'datasource_unavailable');
});

edge('an unexpected error is a bare 500: no message, no stack; the log keeps it', async ({ listeners }) => {
  const response = await fetch(`${listeners.url}/fail/bug`);
  assert.is(response.status, 500);
  const text = await response.text();
  assert.equal(JSON.parse(text), { code: 'internal_error', message: 'internal error', details: {} });
  assert.not.match(text, /hunter2|app\.js|at /);
  assert.ok(logs.some((line) => line.includes('request failed')));
});

edge.run();
