import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { forEachBackend, skippedHere, type Backend } from '../../support/backends.js';
import { credentialProxy, mcpClient, node24, startMcpDemo, type McpDemo } from '../../support/mcp-service.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, projectRoot } from '../../support/test-service.js';

const EMAIL = /@example\.|email/i;
const ACCEPT = 'application/json, text/event-stream';
const INSPECTOR = join(projectRoot, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build');
const CONFORMANCE = join(projectRoot, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli` 1.0.3, on this Node). Run from its own
 * build folder: 1.0.3 looks for its package.json relative to the working directory.
 */
async function inspector(url: string, token: string, ...args: string[]): Promise<Record<string, unknown>> {
  const result = await run(process.execPath, [join(INSPECTOR, 'index.js'), url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args], INSPECTOR);
  assert.is(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function post(demo: McpDemo, body: unknown, headers: Record<string, string>, token: string | null): Promise<Response> {
  return demo.service.request('/mcp', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, token });
}

const LIST_TOOLS = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

/**
 * The MCP endpoint's HTTP edge and the clients nobody on this project wrote: the Inspector's CLI, the
 * official conformance tool's server scenarios (on Node 24, which it needs) and the stdio bridge driven by
 * the SDK's stdio client, on each backend of the PostgreSQL family.
 */
// a named function: the test runner reads the families from the call below, the first one in the file
function suiteOn(backend: Backend): void {
  const test = suite<{ demo: McpDemo }>(`${backend.name}: MCP endpoint: HTTP edge, Inspector CLI, conformance tool, stdio bridge`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.demo = await startMcpDemo(backend, { mcp: { enabled: true, allowedOrigins: ['http://app.example.com'] } });
  });
  test.after(async ({ demo }) => {
    await demo?.close();
  });

  test('no credential: 401 with the Bearer challenge naming the protected resource metadata, which names the endpoint', async ({ demo }) => {
    const url = demo.service.url;
    const none = await post(demo, LIST_TOOLS, {}, null);
    assert.is(none.status, 401);
    assert.is(none.headers.get('www-authenticate')?.endsWith(`resource_metadata="${url}/.well-known/oauth-protected-resource"`), true, none.headers.get('www-authenticate') ?? '');
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
    assert.is(((await none.json()) as { code: string }).code, 'credentials_missing');
    const wrong = await post(demo, LIST_TOOLS, {}, 'not-a-token');
    assert.equal([wrong.status, (wrong.headers.get('www-authenticate') ?? '').includes('error="invalid_token"')], [401, true]);
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const metadata = await demo.service.request(path, { token: null });
      assert.equal([metadata.status, await metadata.json()], [200, { resource: `${url}/mcp`, bearer_methods_supported: ['header'], resource_name: 'vdb-service' }]);
    }
  });

  test('DNS rebinding: another site\'s Origin or Host is refused 403 before authentication; the endpoint\'s own origin and mcp.allowedOrigins are served', async ({ demo }) => {
    const foreign = await post(demo, LIST_TOOLS, { origin: 'http://evil.example.com' }, null);
    assert.equal([foreign.status, ((await foreign.json()) as { code: string }).code], [403, 'forbidden']);
    // fetch sends no Host of its own choosing: node:http does
    const rebound = await new Promise<number | undefined>((resolve, reject) => {
      const target = new URL(`${demo.service.url}/mcp`);
      const sent = request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: {
        host: 'evil.example.com', 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${ANALYST_TOKEN}`,
      } }, (answer) => {
        answer.resume();
        resolve(answer.statusCode);
      });
      sent.once('error', reject);
      sent.end(JSON.stringify(LIST_TOOLS));
    });
    assert.is(rebound, 403);
    const own = await post(demo, LIST_TOOLS, { origin: demo.service.url }, ANALYST_TOKEN);
    assert.is(own.status, 200);
    const allowed = await post(demo, LIST_TOOLS, { origin: 'http://app.example.com' }, ANALYST_TOKEN);
    assert.equal([allowed.status, allowed.headers.get('access-control-allow-origin')], [200, 'http://app.example.com']);
    const preflight = await demo.service.request('/mcp', { method: 'OPTIONS', headers: { origin: 'http://app.example.com', 'access-control-request-method': 'POST' }, token: null });
    assert.equal([preflight.status, preflight.headers.get('access-control-allow-origin')], [204, 'http://app.example.com']);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', 'Mcp-Session-Id');
  });

  test('a stateless client: a tool call without initialize or session is answered; GET without a session is 405; malformed JSON a JSON-RPC parse error', async ({ demo }) => {
    const reply = await post(demo, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'query_customer_orders', arguments: { customerId: 7 } } }, {}, ANALYST_TOKEN);
    assert.is(reply.status, 200);
    assert.is(reply.headers.get('mcp-session-id'), null);
    const body = (await reply.json()) as { id: number; result: CallToolResult };
    const route = await (await demo.service.request('/api/v1/query/perform/customer_orders', { method: 'POST', body: '{"customerId":7}', headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN })).json();
    assert.equal([body.id, body.result.structuredContent], [7, { ...(route as object), truncated: false }]);
    const stream = await demo.service.request('/mcp', { headers: { accept: 'text/event-stream' }, token: ANALYST_TOKEN });
    assert.is(stream.status, 405);
    const malformed = await post(demo, '{"jsonrpc": "2.0", ', {}, ANALYST_TOKEN);
    assert.equal([malformed.status, ((await malformed.json()) as { error: { code: number } }).error.code], [400, -32700]);
  });

  test('a batch is answered as an array in the order of its requests (a notification in it unanswered), a batch of one request by its answer alone; a refusal of the transport keeps its own body', async ({ demo }) => {
    const call = (id: number | string, customerId: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'query_customer_orders', arguments: { customerId } } });
    const route = async (customerId: number) => ({
      ...((await (await demo.service.request('/api/v1/query/perform/customer_orders', { method: 'POST', body: JSON.stringify({ customerId }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN })).json()) as object),
      truncated: false,
    });
    const batch = await post(demo, [call(3, 7), { jsonrpc: '2.0', method: 'notifications/initialized' }, LIST_TOOLS, call('eight', 8)], {}, ANALYST_TOKEN);
    assert.is(batch.status, 200);
    const answers = (await batch.json()) as { id: number | string; result: CallToolResult }[];
    assert.equal(answers.map((answer) => answer.id), [3, 1, 'eight']);
    assert.equal([answers[0]?.result.structuredContent, answers[2]?.result.structuredContent], [await route(7), await route(8)]);
    const one = (await (await post(demo, [call(4, 7)], {}, ANALYST_TOKEN)).json()) as { id: number; result: CallToolResult };
    assert.equal([one.id, one.result.structuredContent], [4, await route(7)]);

    const client = await mcpClient(demo.service, ANALYST_TOKEN);
    const sessionId = (client.transport as { sessionId?: string }).sessionId as string;
    const refused = await post(demo, call(5, 7), { 'mcp-session-id': sessionId, 'mcp-protocol-version': '1999-01-01' }, ANALYST_TOKEN);
    const error = ((await refused.json()) as { error: { code: number; message: string } }).error;
    assert.equal([refused.status, error.code], [400, -32000]);
    assert.match(error.message, 'Unsupported protocol version');
    const answered = (await (await post(demo, call(5, 7), { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }, ANALYST_TOKEN)).json()) as { id: number; result: CallToolResult };
    assert.equal([answered.id, answered.result.structuredContent], [5, await route(7)]);
    await client.close();
  });

  test('a session belongs to its caller: another caller\'s token with its id is refused 403, no token 401; DELETE ends it', async ({ demo }) => {
    const client = await mcpClient(demo.service, ANALYST_TOKEN);
    const transport = client.transport as { sessionId?: string };
    const sessionId = transport.sessionId as string;
    assert.type(sessionId, 'string');
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const stolen = await post(demo, LIST_TOOLS, headers, ADMIN_TOKEN);
    assert.equal([stolen.status, ((await stolen.json()) as { code: string }).code], [403, 'forbidden']);
    assert.is((await post(demo, LIST_TOOLS, headers, null)).status, 401);
    assert.is((await post(demo, LIST_TOOLS, headers, ANALYST_TOKEN)).status, 200);
    assert.is((await client.listTools()).tools.some((tool) => tool.name === 'run_sql'), true);
    const ended = await demo.service.request('/mcp', { method: 'DELETE', headers, token: ANALYST_TOKEN });
    assert.is(ended.status, 200);
    assert.is((await post(demo, LIST_TOOLS, headers, ANALYST_TOKEN)).status, 404);
    await client.close();
  });

  const inspectorMissing = existsSync(join(INSPECTOR, 'index.js')) ? undefined : `@modelcontextprotocol/inspector-cli is not installed (${INSPECTOR})`;
  if (inspectorMissing) test.skip(`the Inspector CLI (${inspectorMissing})`, () => undefined);
  else test('the Inspector CLI: tools, a run_sql with $1 bound, a refusal, a resource; no email for the analyst', async ({ demo }) => {
    const url = `${demo.service.url}/mcp`;
    const listed = await inspector(url, ANALYST_TOKEN, '--method', 'tools/list');
    const names = (listed['tools'] as { name: string }[]).map((tool) => tool.name);
    assert.ok(['list_vdbs', 'describe_vdb', 'run_sql', 'list_metrics', 'query_metrics', 'query_customer_orders', 'action_cancel_order'].every((name) => names.includes(name)), names.join());
    assert.not.match(JSON.stringify(listed), EMAIL);
    const rows = await inspector(url, ANALYST_TOKEN, '--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', 'vdb=retail', 'version=1', 'sql=select id, region from sales.customers where id = $1', 'params=[2]');
    assert.equal((rows['structuredContent'] as { rows: unknown[] }).rows, [{ id: 2, region: (await demo.raw.query('select region from sales.customers where id = 2', [])).rows[0]?.['region'] }]);
    const refused = await inspector(url, ANALYST_TOKEN, '--method', 'tools/call', '--tool-name', 'run_sql', '--tool-arg', 'vdb=retail', 'version=1', 'sql=select email from sales.customers');
    assert.is(refused['isError'], true);
    assert.match(JSON.stringify(refused['content']), /forbidden: .*denial/);
    assert.not.match(JSON.stringify(refused), /@example\./);
    const catalog = await inspector(url, ANALYST_TOKEN, '--method', 'resources/read', '--uri', 'vdb://retail/1/catalog');
    assert.not.match(JSON.stringify(catalog), EMAIL);
    assert.match(JSON.stringify(catalog), 'order_lines');
  });

  test('the stdio bridge (vdb-service mcp-stdio), driven by the SDK\'s stdio client: the same tools and answers as over HTTP', async ({ demo }) => {
    const bridge = new StdioClientTransport({
      command: process.execPath,
      args: [join(projectRoot, 'dist', 'core', 'cli.js'), 'mcp-stdio', '--url', `${demo.service.url}/mcp`, '--token-env', 'VDB_MCP_TOKEN'],
      env: { VDB_MCP_TOKEN: ANALYST_TOKEN, PATH: process.env['PATH'] ?? '' },
      stderr: 'pipe',
    });
    const overStdio = new Client({ name: 'stdio-test', version: '1.0.0' });
    await overStdio.connect(bridge);
    const overHttp = await mcpClient(demo.service, ANALYST_TOKEN);
    try {
      assert.equal((await overStdio.listTools()).tools, (await overHttp.listTools()).tools);
      const args = { name: 'run_sql', arguments: { vdb: 'retail', version: '1', sql: 'select id, name from sales.customers where id = $1', params: [5] } };
      assert.equal(await overStdio.callTool(args), await overHttp.callTool(args));
    } finally {
      await overStdio.close();
      await overHttp.close();
    }
    const noToken = await run(process.execPath, [join(projectRoot, 'dist', 'core', 'cli.js'), 'mcp-stdio', '--url', `${demo.service.url}/mcp`, '--token-env', 'VDB_NO_SUCH_TOKEN_VARIABLE'], projectRoot);
    assert.equal([noToken.code, noToken.stderr.trim()], [2, 'mcp-stdio: the environment variable VDB_NO_SUCH_TOKEN_VARIABLE holds no token']);
  });

  const node = existsSync(CONFORMANCE) ? node24() : { missing: `@modelcontextprotocol/conformance is not installed (${CONFORMANCE})` };
  // the tool's other server scenarios call the tools, prompts and resources of its reference server by name
  // (test_simple_text, test://static-text, …) or need capabilities this server does not offer (logging, completions)
  const scenarios = ['server-initialize', 'ping', 'tools-list', 'resources-list', 'dns-rebinding-protection', 'server-sse-multiple-streams'];
  if ('missing' in node) {
    test.skip(`the conformance tool's server scenarios (${node.missing})`, () => undefined);
  } else {
    test(`the conformance tool (@modelcontextprotocol/conformance 0.1.16, on Node 24): ${scenarios.join(', ')}`, async ({ demo }) => {
      // it sends no credential: a proxy adds the analyst's and keeps Host and Origin as the tool sends them
      const proxy = await credentialProxy(demo.service.url, ANALYST_TOKEN);
      try {
        for (const scenario of scenarios) {
          const result = await run(node.path, [CONFORMANCE, 'server', '--url', `${proxy.url}/mcp`, '--scenario', scenario], projectRoot);
          const summary = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(result.stdout);
          assert.ok(summary && summary[1] === summary[2] && summary[3] === '0' && Number(summary[2]) > 0, `${scenario}:\n${result.stdout}\n${result.stderr}`);
          assert.is(result.code, 0, scenario);
        }
      } finally {
        await proxy.close();
      }
    });
  }
  test.run();
}

forEachBackend(suiteOn, ['postgres']);
