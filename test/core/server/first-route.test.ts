import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import restify from 'restify';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { onFirst, serveFirst } from '../../../core/server/first-route.js';
import { ANALYST_TOKEN, startTestService, type TestService } from '../../support/test-service.js';

// The query route is served from restify's first hook when its URL is the plain path of a known query, and
// by its restify route otherwise: both answer alike, and both are logged and counted as one route.
const first = suite<{ service: TestService }>('the query route served from the first hook (demo bundle, PGlite)');

first.before(async (context) => {
  context.service = await startTestService();
});
first.after(async ({ service }) => {
  await service.close();
});

const PATH = '/api/v1/query/perform/customer_orders';

function post(service: TestService, path: string, body: string, token: string | null = ANALYST_TOKEN, headers: Record<string, string> = {}) {
  return service.request(path, { method: 'POST', token, body, headers: { 'content-type': 'application/json', ...headers } });
}

interface AccessLine { msg: string; reqId: string; method: string; url: string; status: number; ms: number }

function accessLine(service: TestService, reqId: string): AccessLine | undefined {
  return service.logs.map((line) => JSON.parse(line) as AccessLine).find((line) => line.msg === 'request' && line.reqId === reqId);
}

async function countOf(service: TestService, status: number): Promise<number> {
  const text = await (await service.request('/observe/metrics')).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`vdb_http_requests_total{method="POST",route="/api/v1/query/perform/:name",status="${status}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

first('the plain path and its variants the hook leaves to restify give the same rows, headers and request id', async ({ service }) => {
  const variants = [PATH, `${PATH}?ignored=1`, PATH.replace('customer_orders', 'customer%5Forders')];
  const answers = await Promise.all(variants.map((path) => post(service, path, '{"customerId": 1}', ANALYST_TOKEN, { 'x-request-id': `variant-${path.length}` })));
  for (const [index, response] of answers.entries()) {
    assert.is(response.status, 200, variants[index]);
    assert.is(response.headers.get('content-type'), 'application/json');
    assert.is(response.headers.get('server'), 'vdb-service');
    assert.is(response.headers.get('x-request-id'), `variant-${variants[index]?.length}`);
  }
  const bodies = await Promise.all(answers.map((response) => response.text()));
  assert.ok((JSON.parse(bodies[0] as string) as { rowCount: number }).rowCount > 0);
  for (const body of bodies) assert.is(body, bodies[0]);
  assert.is(Number(answers[0]?.headers.get('content-length')), Buffer.byteLength(bodies[0] as string));
});

first('a failure answers through the one error mapping: challenge, code and envelope as on every route', async ({ service }) => {
  const missing = await post(service, PATH, '{"customerId": 1}', null);
  assert.is(missing.status, 401);
  assert.is(missing.headers.get('www-authenticate'), 'Bearer realm="vdb-service"');
  assert.equal(await missing.json(), { code: 'credentials_missing', message: 'no credentials: send "Authorization: Bearer <token>"', details: {} });
  const unknown = await post(service, PATH, '{"customerId": 1}', 'not-a-real-token');
  assert.match(unknown.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const broken = await post(service, PATH, '{"customerId": ');
  assert.is(broken.status, 400);
  assert.is((await broken.json() as { code: string }).code, 'invalid_body');
  const unfilled = await post(service, PATH, '{}');
  assert.is(unfilled.status, 400);
  const yaml = await service.request(PATH, { method: 'POST', token: ANALYST_TOKEN, body: 'customerId: 1', headers: { 'content-type': 'application/yaml' } });
  assert.is(yaml.status, 200);
  const unknownQuery = await post(service, '/api/v1/query/perform/no_such_query', '{}');
  assert.is(unknownQuery.status, 404);
  assert.is((await unknownQuery.json() as { code: string }).code, 'unknown_query');
});

first('every answer of the route writes its access line and counts under the route pattern', async ({ service }) => {
  const [ok, refused] = [await countOf(service, 200), await countOf(service, 401)];
  const answered = await post(service, PATH, '{"customerId": 2}', ANALYST_TOKEN, { 'x-request-id': 'first-hook-ok' });
  const denied = await post(service, PATH, '{"customerId": 2}', null, { 'x-request-id': 'first-hook-401' });
  assert.equal([answered.status, denied.status], [200, 401]);
  assert.is(await countOf(service, 200), ok + 1);
  assert.is(await countOf(service, 401), refused + 1);
  const line = accessLine(service, 'first-hook-ok');
  assert.equal([line?.method, line?.url, line?.status], ['POST', PATH, 200]);
  assert.type(line?.ms, 'number');
  assert.is(accessLine(service, 'first-hook-401')?.status, 401);
});
first.run();

const unsendable = suite('a first-hook route whose answer cannot be serialized');

unsendable('answers 500 internal_error instead of leaving the client waiting', async () => {
  const server = restify.createServer({ name: 'first-route-test' });
  const lines: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void lines.push(line) });
  // restify 12's req.id(), which the listener's own first hook sets in the service
  onFirst(server, (req) => {
    (req as unknown as { id(value: string): string }).id('unsendable-1');
    return true;
  });
  serveFirst(server, logger, { method: 'GET', pattern: '/big', match: (req) => (req.url === '/big' ? true : undefined), handle: async () => ({ count: 1n }) });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    const { port } = server.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/big`, { signal: AbortSignal.timeout(10_000) });
    assert.is(response.status, 500);
    assert.is(((await response.json()) as { code: string }).code, 'internal_error');
    assert.ok(lines.some((line) => line.includes('BigInt')), 'the cause is logged');
  } finally {
    server.close();
  }
});

unsendable.run();
