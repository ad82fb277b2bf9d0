import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import http from 'node:http';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnService, type SpawnedService } from '../../support/spawned-service.js';
import { ANALYST_TOKEN, demoConfig } from '../../support/test-service.js';

/**
 * Clients that keep connections alive and reuse them after an idle pause, against the service as its own
 * process. Node's default keeps an idle connection 5 s (and closes it 1 s later): a client that sends on it as it
 * closes gets a reset (Python requests' Session, Go's http.Client, nginx upstream keepalive and Node's
 * keep-alive http.Agent keep idle connections longer than that, or without limit), and fetch (undici), which
 * drops its idle connections 2 s before the server's `Keep-Alive: timeout`, connects again after every pause.
 */
const test = suite<{ service: SpawnedService }>('keep-alive clients that pause', { service: undefined as unknown as SpawnedService });

const LOOPS = 12;
/** Each loop's pauses, spread over 5.5–7 s: around the moment Node's default closes an idle connection. */
const pauseMs = (loop: number, round: number) => 5_500 + ((loop * 2 + round) * 1_500) / (LOOPS * 2);
/** fetch's loops pause together (its pool is shared: a loop's request keeps the connections warm for another's). */
const FETCH_PAUSE_MS = 6_000;

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

test.before(async (context) => {
  context.service = await spawnService(demoConfig({ mcp: { enabled: true } }));
});

test.after(async ({ service }) => {
  await service?.stop();
});

const headers = { authorization: `Bearer ${ANALYST_TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'keep-alive', version: '1' } } });
/** A query endpoint, health and MCP: every route of the listener shares its connections. */
const requests = [
  { method: 'POST', path: '/api/v1/query/perform/product_search', body: '{"term":"a"}' },
  { method: 'GET', path: '/observe/health', body: undefined },
  { method: 'POST', path: '/mcp', body: initialize },
];

/** A request through a keep-alive http.Agent; resolves with the status and whether it reused a connection. */
function agentRequest(agent: http.Agent, url: string, request: (typeof requests)[number]): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url + request.path, { agent, method: request.method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

test('keep-alive clients idle 5.5–7 s between requests: none fails, and each request after a pause reuses its connection', async ({ service }) => {
  const failures: string[] = [];
  const statuses: number[] = [];
  let agentConnects = 0;
  // fetch's new connections to the service, counted while its requests after a pause run
  const port = Number(new URL(service.url).port);
  let counting = false;
  let fetchConnects = 0;
  const onConnected = (message: unknown) => {
    if (counting && (message as { connectParams?: { port?: string } }).connectParams?.port === String(port)) fetchConnects++;
  };
  subscribe('undici:client:connected', onConnected);
  const agentLoop = async (loop: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let round = 0; round < 3; round++) {
      if (round > 0) await sleep(pauseMs(loop, round - 1));
      const request = requests[(loop + round) % requests.length] as (typeof requests)[number];
      await agentRequest(agent, service.url, request).then(({ status, reused }) => {
        statuses.push(status);
        if (round > 0 && !reused) agentConnects++;
      }, (error: unknown) => failures.push(`http.Agent ${request.path}: ${(error as { code?: string }).code ?? String(error)}`));
    }
    agent.destroy();
  };
  const fetchLoop = async (loop: number) => {
    for (let round = 0; round < 3; round++) {
      if (round > 0) await sleep(FETCH_PAUSE_MS);
      // after the first pause, every loop's first connection is idle in fetch's pool
      if (round === 1) counting = true;
      const request = requests[(loop + round) % requests.length] as (typeof requests)[number];
      await fetch(service.url + request.path, { method: request.method, headers, body: request.body })
        .then(async (response) => {
          await response.arrayBuffer();
          statuses.push(response.status);
        }, (error: unknown) => failures.push(`fetch ${request.path}: ${String((error as Error).cause ?? error)}`));
    }
  };
  try {
    await Promise.all([...Array.from({ length: LOOPS }, (_, loop) => agentLoop(loop)), ...Array.from({ length: LOOPS }, (_, loop) => fetchLoop(loop))]);
  } finally {
    unsubscribe('undici:client:connected', onConnected);
  }
  assert.equal(failures, [], 'no request fails');
  assert.equal([...new Set(statuses)], [200]);
  assert.is(statuses.length, LOOPS * 2 * 3);
  // http.Agent and fetch send each request after a pause on a connection they kept: none opens another
  assert.equal({ agentConnects, fetchConnects }, { agentConnects: 0, fetchConnects: 0 });
});

// last: it stops the service
test('SIGTERM while a keep-alive request is in flight: it is answered, then its connection is closed at once, not held for the drain period', async ({ service }) => {
  const { hostname, port } = new URL(service.url);
  const socket = net.connect(Number(port), hostname);
  let received = '';
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => { received += chunk.toString(); });
  socket.on('error', () => undefined);
  const body = '{"term":"a"}';
  socket.write(`POST /api/v1/query/perform/product_search HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${ANALYST_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 4)}`);
  // the request is in flight (its body half sent) when the service is told to stop
  await sleep(200);
  const stopped = service.stop();
  await waitFor(() => service.output().includes('shutting down: draining requests'));
  socket.write(body.slice(4));
  await closed;
  assert.match(received, /^HTTP\/1\.1 200 /, 'the request in flight is answered');
  assert.is(await stopped, 0);
  assert.not.match(service.output(), /closing connections still open after the drain period/);
});

/** Waits until `condition` holds; a guard of 30 s against a hang, not a bound tested. */
async function waitFor(condition: () => boolean): Promise<void> {
  for (const start = Date.now(); !condition(); await sleep(20)) if (Date.now() - start > 30_000) throw new Error('the service never said it drains');
}

test.run();
