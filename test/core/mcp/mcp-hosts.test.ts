import { request } from 'node:http';
import { hostname } from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

/**
 * DNS rebinding on a listener bound to every interface (the demo's `0.0.0.0`, docs/mcp.md#origin-and-host-dns-rebinding):
 * a page of another site whose name resolves to this machine sends its own name as `Host` and as `Origin`,
 * same-origin to the browser. With the caller's token in hand (a proxy, an extension), only the `Host` tells it.
 */
const test = suite<{ service: TestService }>('MCP on a listener bound to every interface: the Host it answers for');

test.before(async (context) => {
  context.service = await startTestService({
    config: demoConfig({ server: { host: '0.0.0.0', port: 0 }, mcp: { enabled: true, allowedHosts: ['vdb.example.com'] } }),
  });
});
test.after(async ({ service }) => {
  await service?.close();
});

/** A `tools/list` POST with `host` as its Host (and its origin as Origin), as the analyst: the status. */
function listToolsAs(service: TestService, host: string): Promise<{ status: number | undefined; body: string }> {
  const target = new URL(`${service.url}/mcp`);
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port: target.port, path: target.pathname, method: 'POST', headers: {
      host, origin: `http://${host}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${ANALYST_TOKEN}`,
    } }, (answer) => {
      let body = '';
      answer.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).once('end', () => resolve({ status: answer.statusCode, body }));
    });
    sent.once('error', reject);
    sent.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
  });
}

test('a name of another site is refused 403 forbidden, naming mcp.allowedHosts, even with a valid token and its own Origin', async ({ service }) => {
  const port = new URL(service.url).port;
  for (const host of [`evil.example.com:${port}`, `rebind.attacker.test:${port}`, 'evil.example.com']) {
    const answer = await listToolsAs(service, host);
    assert.is(answer.status, 403, `${host}: ${answer.body}`);
    const body = JSON.parse(answer.body) as { code: string; message: string };
    assert.is(body.code, 'forbidden');
    assert.match(body.message, 'mcp.allowedHosts');
  }
});

test('an address (which no name can rebind), a loopback name, the machine\'s own name and mcp.allowedHosts are served', async ({ service }) => {
  const port = new URL(service.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `192.0.2.10:${port}`, `[::1]:${port}`, `${hostname()}:${port}`, `vdb.example.com:${port}`, `VDB.Example.com:${port}`]) {
    const answer = await listToolsAs(service, host);
    assert.is(answer.status, 200, `${host}: ${answer.body}`);
  }
});

test.run();
