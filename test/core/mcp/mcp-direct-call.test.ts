import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { NodeStreamableTransport } from '../../../core/mcp/node-transport.js';
import { forEachBackend, skippedHere, type Backend } from '../../support/backends.js';
import { mcpClient, startMcpDemo, type McpDemo } from '../../support/mcp-service.js';
import { ADMIN_TOKEN, ANALYST_TOKEN } from '../../support/test-service.js';

const ACCEPT = 'application/json, text/event-stream';
const VERSION = '2025-06-18';

interface Context {
  demo: McpDemo;
  /** The methods of the POSTs the SDK's transport answered, in order (the rest the door answered itself). */
  viaSdk: string[];
  restore: () => void;
}

async function post(demo: McpDemo, body: unknown, token: string | null, headers: Record<string, string> = {}): Promise<Response> {
  return demo.service.request('/mcp', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, token });
}

async function openSession(demo: McpDemo, token: string): Promise<string> {
  const opened = await post(demo, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'direct', version: '1' } } }, token);
  assert.is(opened.status, 200);
  return opened.headers.get('mcp-session-id') as string;
}

/** A POST's answer as the client reads it: the status, the headers the transport sets, the body's bytes. */
async function answerOf(response: Response): Promise<[number, string | null, string | null, string]> {
  return [response.status, response.headers.get('content-type'), response.headers.get('mcp-session-id'), await response.text()];
}

/** The calls compared: rows, a refusal with its denial, an unknown tool, missing arguments, no arguments at all. */
const CALLS: { name: string; arguments?: Record<string, unknown> }[] = [
  { name: 'query_customer_orders', arguments: { customerId: 7 } },
  { name: 'run_sql', arguments: { vdb: 'retail', version: '1', sql: 'select email from sales.customers' } },
  { name: 'run_sql', arguments: { vdb: 'retail', version: '1', sql: 'select id, status from sales.orders where customer_id = $1', params: [7] } },
  { name: 'no_such_tool', arguments: {} },
  { name: 'describe_vdb', arguments: {} },
  { name: 'list_vdbs' },
];

/**
 * A lone `tools/call` answered by the door itself (core/mcp/direct-tool-call.ts), against the SDK's path for
 * the same message (a progress token sends it there), through the real service and the SDK's own client:
 * the same bytes, the same refusals, the session's caller check, and cancellation as the SDK's protocol has it.
 */
// a named function: the test runner reads the families from the call below, the first one in the file
function suiteOn(backend: Backend): void {
  const test = suite<Context>(`${backend.name}: MCP tool calls answered by the door`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.demo = await startMcpDemo(backend, { server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 120_000 } });
    context.viaSdk = [];
    const original = NodeStreamableTransport.prototype.handleNode;
    NodeStreamableTransport.prototype.handleNode = function (this: NodeStreamableTransport, req: IncomingMessage, res: ServerResponse, body: unknown, auth: AuthInfo) {
      // a POST's method; the SDK's client also opens the session's stream (a GET)
      if (req.method === 'POST') context.viaSdk.push(String((body as { method?: unknown } | null)?.method));
      return original.call(this, req, res, body, auth);
    };
    context.restore = () => {
      NodeStreamableTransport.prototype.handleNode = original;
    };
  });
  test.after(async ({ demo, restore }) => {
    restore?.();
    await demo?.close();
  });

  test('the door\'s answer to a tools/call is the SDK\'s, byte for byte: rows, refusals, an unknown tool, missing arguments; stateless and in a session', async (context) => {
    const { demo } = context;
    const sessionId = await openSession(demo, ANALYST_TOKEN);
    const modes: Record<string, string>[] = [{}, { 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION }];
    for (const headers of modes) {
      for (const [index, params] of CALLS.entries()) {
        context.viaSdk.length = 0;
        const direct = await answerOf(await post(demo, { jsonrpc: '2.0', id: `call-${index}`, method: 'tools/call', params }, ANALYST_TOKEN, headers));
        assert.equal(context.viaSdk, [], `${params.name}: answered by the door`);
        const sdk = await answerOf(await post(demo, { jsonrpc: '2.0', id: `call-${index}`, method: 'tools/call', params: { ...params, _meta: { progressToken: index } } }, ANALYST_TOKEN, headers));
        assert.equal(context.viaSdk, ['tools/call'], `${params.name}: a progress token goes to the SDK`);
        assert.equal(direct, sdk, params.name);
        assert.is(direct[0], 200);
      }
    }
    const refused = JSON.parse((await answerOf(await post(demo, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: CALLS[1] }, ANALYST_TOKEN)))[3]) as { id: number; result: CallToolResult };
    assert.equal([refused.id, refused.result.isError], [9, true]);
    assert.match(JSON.stringify(refused.result.content), /^\[{"type":"text","text":"forbidden: .*\(denial: /);
    const unknown = JSON.parse((await answerOf(await post(demo, { jsonrpc: '2.0', id: 10, method: 'tools/call', params: CALLS[3] }, ANALYST_TOKEN)))[3]) as { result: CallToolResult };
    assert.equal([unknown.result.isError, (unknown.result.content[0] as { text: string }).text], [true, 'not_found: no tool no_such_tool']);
  });

  test('through the SDK\'s client in a session, a tool call is the door\'s and answers the route\'s rows; the tool call is counted and logged as before', async (context) => {
    const { demo } = context;
    const client: Client = await mcpClient(demo.service, ANALYST_TOKEN);
    try {
      context.viaSdk.length = 0;
      const before = demo.service.logs.length;
      const result = (await client.callTool({ name: 'query_customer_orders', arguments: { customerId: 7 } })) as CallToolResult;
      assert.equal(context.viaSdk, [], 'the tools/call never reached the SDK\'s transport');
      const route = (await (await demo.service.request('/api/v1/query/perform/customer_orders', { method: 'POST', body: JSON.stringify({ customerId: 7 }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN })).json()) as Record<string, unknown>;
      assert.equal(result.structuredContent, { ...route, truncated: false });
      const lines = demo.service.logs.slice(before).map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'mcp tool call');
      assert.equal(lines.map(({ tool, outcome }) => [tool, outcome]), [['query_customer_orders', 'ok']]);
      const metrics = await (await demo.service.request('/observe/metrics')).text();
      assert.match(metrics, /vdb_mcp_tool_calls_total\{tool="query_customer_orders",outcome="ok"\} [1-9]/);
    } finally {
      await client.close();
    }
  });

  test('messages the door does not read go to the SDK unchanged: bad params -32602, a batch, a task, another member, an SSE-only Accept, an unsupported version', async (context) => {
    const { demo } = context;
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_vdbs', arguments: {} } };
    for (const [message, headers, status] of [
      [{ ...call, params: { name: 'run_sql', arguments: 'select 1' } }, {}, 200],
      [{ ...call, params: { name: 'run_sql', arguments: [1] } }, {}, 200],
      [{ ...call, params: { arguments: {} } }, {}, 200],
      [{ ...call, params: { name: 7 } }, {}, 200],
      [[call], {}, 200],
      [{ ...call, params: { ...call.params, task: { ttl: 1000 } } }, {}, 200],
      [{ ...call, extra: true }, {}, 400],
      [{ ...call, id: 1.5 }, {}, 400],
      [{ ...call, jsonrpc: '1.0' }, {}, 400],
      [call, { accept: 'text/event-stream' }, 406],
      [call, { 'mcp-protocol-version': '1999-01-01' }, 400],
    ] as const) {
      context.viaSdk.length = 0;
      const answer = await post(demo, message, ANALYST_TOKEN, headers);
      assert.equal([answer.status, context.viaSdk.length], [status, 1], JSON.stringify([message, headers]));
    }
    const invalid = (await (await post(demo, { ...call, params: { name: 'run_sql', arguments: 'select 1' } }, ANALYST_TOKEN)).json()) as { error: { code: number } };
    assert.is(invalid.error.code, -32602);
  });

  test('a session used with another caller\'s token: its tools/call refused 403, without one 401; its own caller answered', async ({ demo }) => {
    const sessionId = await openSession(demo, ANALYST_TOKEN);
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION };
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'query_customer_orders', arguments: { customerId: 7 } } };
    const stolen = await post(demo, call, ADMIN_TOKEN, headers);
    assert.equal([stolen.status, ((await stolen.json()) as { code: string }).code], [403, 'forbidden']);
    assert.is((await post(demo, call, null, headers)).status, 401);
    assert.is((await post(demo, call, ANALYST_TOKEN, { ...headers, 'mcp-session-id': randomUUID() })).status, 404);
    const own = await post(demo, call, ANALYST_TOKEN, headers);
    assert.equal([own.status, own.headers.get('mcp-session-id')], [200, sessionId]);
  });

  if (backend.name === 'pglite') {
    test.skip('cancellation (a statement of PGlite\'s runs in this process: no lock can keep it waiting for the test to cancel it)', () => undefined);
  } else {
    test('a notifications/cancelled for the call, and the client going away, abort its statement', async (context) => {
      const { demo } = context;
      const locker = new pg.Client({ connectionString: backend.url });
      // pg_stat_activity is read once per transaction: the one watching is not the one holding the lock
      const watcher = new pg.Client({ connectionString: backend.url });
      await locker.connect();
      await watcher.connect();
      const client = await mcpClient(demo.service, ANALYST_TOKEN);
      try {
        // the tool's statement waits for the lock until it is cancelled (or the 120 s statement timeout)
        await locker.query('begin');
        await locker.query('lock table sales.orders in access exclusive mode');
        const waiting = async (marker: string) => (await watcher.query('select count(*)::int as n from pg_stat_activity where state = \'active\' and query like $1 and pid <> pg_backend_pid()', [`%${marker}%`])).rows[0].n as number;
        const until = async (marker: string, count: number) => {
          for (let tries = 0; tries < 300 && await waiting(marker) !== count; tries += 1) await delay(100);
          assert.is(await waiting(marker), count, marker);
        };
        const sql = (marker: string) => ({ name: 'run_sql', arguments: { vdb: 'retail', version: '1', sql: `select id, '${marker}' as marker from sales.orders where customer_id = $1`, params: [7] } });

        // the SDK's client cancels: its abort sends notifications/cancelled for the request's id
        const cancelled = `cancelled-${randomUUID()}`;
        const controller = new AbortController();
        context.viaSdk.length = 0;
        const pending = client.callTool(sql(cancelled), undefined, { signal: controller.signal }).then(() => 'answered', (error: unknown) => String(error));
        await until(cancelled, 1);
        assert.equal(context.viaSdk, [], 'the tools/call is the door\'s');
        controller.abort('enough');
        await until(cancelled, 0);
        assert.equal(context.viaSdk, ['notifications/cancelled']);
        assert.match(await pending, 'enough');

        // the client goes away: its connection closes
        const sessionId = (client.transport as { sessionId?: string }).sessionId as string;
        const gone = `gone-${randomUUID()}`;
        const url = new URL(`${demo.service.url}/mcp`);
        const body = JSON.stringify({ jsonrpc: '2.0', id: 'away', method: 'tools/call', params: sql(gone) });
        const away = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: {
          'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${ANALYST_TOKEN}`, 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION,
        } });
        away.on('error', () => undefined);
        away.end(body);
        await until(gone, 1);
        away.destroy();
        await until(gone, 0);

        // both counted and logged as cancelled, at info: no error of the service's own (they were no timeout)
        const lines = () => demo.service.logs.map((line) => JSON.parse(line) as { msg?: string; level?: number; outcome?: string; code?: string });
        for (let tries = 0; tries < 50 && lines().filter((line) => line.msg === 'mcp tool call' && line.outcome === 'cancelled').length < 2; tries += 1) await delay(100);
        assert.is(lines().filter((line) => line.msg === 'mcp tool call' && line.outcome === 'cancelled').length, 2);
        assert.equal(lines().filter((line) => (line.level ?? 0) >= 50).map((line) => line.msg), []);

        // the lock released, the session answers its next call
        await locker.query('rollback');
        const next = (await client.callTool(sql(`after-${randomUUID()}`))) as CallToolResult;
        assert.is(next.isError, undefined, JSON.stringify(next));
      } finally {
        await locker.query('rollback').catch(() => undefined);
        await locker.end();
        await watcher.end();
        await client.close();
      }
    });
  }
  test.run();
}

forEachBackend(suiteOn, ['postgres']);
