import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { forEachBackend, skippedHere, type Backend } from '../../support/backends.js';
import { mcpClient, startMcpDemo, type McpDemo } from '../../support/mcp-service.js';
import { projectRoot } from '../../support/test-service.js';

const SECRET = 'the-mcp-contract-suite-shared-secret-0123456789';
const ISSUER = 'https://login.example.test/';
const ACCEPT = 'application/json, text/event-stream';
/** An email address of the seed, in any form. */
const EMAIL_VALUE = /@example\./i;
const EMAIL = /@example\.|email/i;

/** An HS256 token of the demo's issuer; `expiresIn` seconds from now. */
async function jwt(subject: string, roles: string[], expiresIn = 600): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: subject, roles, iss: ISSUER, iat: now, exp: now + expiresIn }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(SECRET));
}

interface Context {
  demo: McpDemo;
  analystToken: string;
  adminToken: string;
  analyst: Client;
  admin: Client;
}

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');
const codeOf = (result: CallToolResult) => text(result).split(':')[0];

async function post(demo: McpDemo, body: unknown, token: string | null, headers: Record<string, string> = {}): Promise<Response> {
  return demo.service.request('/mcp', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, token });
}

async function openSession(demo: McpDemo, token: string): Promise<string> {
  const opened = await post(demo, { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'contract', version: '1' } } }, token);
  assert.is(opened.status, 200);
  return opened.headers.get('mcp-session-id') as string;
}

async function metric(demo: McpDemo, series: string): Promise<number> {
  const line = (await (await demo.service.request('/observe/metrics')).text()).split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.split(' ')[1] ?? 0);
}

/**
 * docs/mcp.md's promises as a client sees them, one by one, through the SDK's own client and plain HTTP
 * against the real service (with the JWT scheme, so that tokens can expire) on each backend of the
 * PostgreSQL family: the tool contract, protocol errors, protocol versions, sessions and expiry, a caller
 * without a data role, the analyst and the email in every form, writes in every form, the stdio bridge's exit.
 */
// a named function: the test runner reads the families from the call below, the first one in the file
function suiteOn(backend: Backend): void {
  const test = suite<Context>(`${backend.name}: MCP contract, promise by promise`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.demo = await startMcpDemo(backend, {
      auth: { scheme: 'jwt', adminRoles: ['admin'], secret: SECRET, issuer: ISSUER, clockToleranceSeconds: 0 },
    });
    context.analystToken = await jwt('analyst', ['analyst']);
    context.adminToken = await jwt('ops', ['admin', 'clerk']);
    context.analyst = await mcpClient(context.demo.service, context.analystToken);
    context.admin = await mcpClient(context.demo.service, context.adminToken);
  });
  test.after(async ({ demo, analyst, admin }) => {
    await analyst?.close();
    await admin?.close();
    await demo?.close();
  });

  test('tools/list: each tool\'s input properties, required fields and annotations as the contract names them; one page', async ({ analyst }) => {
    const listed = await analyst.listTools();
    assert.is(listed.nextCursor, undefined);
    const byName = new Map(listed.tools.map((tool) => [tool.name, tool]));
    const shape = (tool: Tool | undefined) => [Object.keys(tool?.inputSchema.properties ?? {}), tool?.inputSchema.required ?? []];
    const vdb = ['vdb', 'version'];
    assert.equal(shape(byName.get('list_vdbs')), [[], []]);
    assert.equal(shape(byName.get('describe_vdb')), [vdb, ['vdb']]);
    assert.equal(shape(byName.get('run_sql')), [[...vdb, 'sql', 'params', 'maxRows'], ['vdb', 'sql']]);
    assert.equal(shape(byName.get('list_metrics')), [vdb, ['vdb']]);
    assert.equal(shape(byName.get('query_metrics')), [[...vdb, 'dimensions', 'measures', 'fields', 'where', 'having', 'orderBy', 'limit', 'explain'], ['vdb']]);
    assert.equal(shape(byName.get('ask')), [['capability', ...vdb, 'goal'], ['capability', 'vdb', 'goal']]);
    assert.equal(shape(byName.get('query_customer_orders')), [['customerId'], ['customerId']]);
    assert.equal(shape(byName.get('action_place_order')), [['customerId', 'lines', 'idempotencyKey'], ['customerId', 'lines']]);
    for (const tool of listed.tools) {
      assert.ok((tool.description ?? '').length > 20, tool.name);
      const { readOnlyHint, destructiveHint } = tool.annotations ?? {};
      if (tool.name.startsWith('action_')) assert.equal([readOnlyHint, destructiveHint], [false, true], tool.name);
      else if (tool.name === 'ask') assert.is(readOnlyHint, false);
      else assert.equal([readOnlyHint, destructiveHint], [true, false], tool.name);
    }
    assert.match(byName.get('query_region_revenue')?.description ?? '', /^Revenue of the orders not cancelled by sales region/);
  });

  test('a tool answering rows: structuredContent {columns, rows, rowCount, truncated} and the same JSON as its text content', async ({ analyst }) => {
    for (const [tool, args] of [
      ['run_sql', { vdb: 'retail', version: '1', sql: 'select id, status from sales.orders where customer_id = $1', params: [7] }],
      ['query_customer_orders', { customerId: 7 }],
      ['query_region_revenue', {}],
      ['query_metrics', { vdb: 'retail', version: '1', dimensions: ['customers.region'], measures: ['order_count'] }],
    ] as const) {
      const result = await call(analyst, tool, args);
      assert.is(result.isError, undefined, `${tool}: ${text(result)}`);
      const structured = result.structuredContent as { rows: unknown[]; rowCount: number; truncated: boolean };
      assert.equal(Object.keys(structured).sort(), ['columns', 'rowCount', 'rows', 'truncated'], tool);
      assert.equal([structured.rowCount, structured.truncated], [structured.rows.length, false], tool);
      assert.ok(structured.rows.length > 0, tool);
      assert.equal(result.content.map((item) => item.type), ['text'], tool);
      assert.equal(JSON.parse(text(result)), structured, tool);
    }
  });

  test('malformed params of a known method are JSON-RPC -32602 (invalid params), not an internal error', async ({ demo, analystToken }) => {
    for (const message of [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'run_sql', arguments: 'select 1' } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
      { jsonrpc: '2.0', id: 3, method: 'resources/read', params: {} },
      { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 5 } },
    ]) {
      const answer = await post(demo, message, analystToken);
      const body = (await answer.json()) as { id: number; error?: { code: number; message: string } };
      assert.equal([answer.status, body.id, body.error?.code], [200, message.id, -32602], JSON.stringify(body));
    }
  });

  test('protocol versions: an unsupported MCP-Protocol-Version is refused 400, stateless and in a session; an initialize with an unknown version gets the server\'s own', async ({ demo, analystToken }) => {
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const stateless = await post(demo, list, analystToken, { 'mcp-protocol-version': '1999-01-01' });
    assert.equal([stateless.status, ((await stateless.json()) as { error: { code: number } }).error.code], [400, -32000]);
    const sessionId = await openSession(demo, analystToken);
    const inSession = await post(demo, list, analystToken, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '1999-01-01' });
    assert.is(inSession.status, 400);
    assert.is((await post(demo, list, analystToken, { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' })).status, 200);
    const unknown = await post(demo, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'old', version: '1' } } }, analystToken);
    const offered = ((await unknown.json()) as { result: { protocolVersion: string } }).result.protocolVersion;
    assert.match(offered, /^20\d\d-\d\d-\d\d$/);
    assert.is.not(offered, '1999-01-01');
  });

  test('sessions: GET opens the session\'s event stream; GET and DELETE with another caller\'s token are refused 403 and the session lives on; DELETE without a session is 405', async ({ demo, analystToken, adminToken }) => {
    const sessionId = await openSession(demo, analystToken);
    const headers = { 'mcp-session-id': sessionId, accept: 'text/event-stream' };
    const stolenStream = await demo.service.request('/mcp', { headers, token: adminToken });
    assert.equal([stolenStream.status, ((await stolenStream.json()) as { code: string }).code], [403, 'forbidden']);
    const stolenEnd = await demo.service.request('/mcp', { method: 'DELETE', headers, token: adminToken });
    assert.is(stolenEnd.status, 403);
    const stream = await demo.service.request('/mcp', { headers, token: analystToken });
    assert.equal([stream.status, stream.headers.get('content-type')], [200, 'text/event-stream']);
    await stream.body?.cancel();
    assert.is((await post(demo, { jsonrpc: '2.0', id: 1, method: 'ping' }, analystToken, { 'mcp-session-id': sessionId })).status, 200);
    assert.is((await demo.service.request('/mcp', { method: 'DELETE', token: analystToken })).status, 405);
    assert.is((await demo.service.request('/mcp', { method: 'DELETE', headers, token: analystToken })).status, 200);
  });

  test('a token that expires mid-session: 401 token_expired with the challenge naming the resource metadata (which names the issuer); the same subject\'s fresh token goes on', async ({ demo }) => {
    const shortLived = await jwt('analyst', ['analyst'], 2);
    const sessionId = await openSession(demo, shortLived);
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    assert.is((await post(demo, ping, shortLived, { 'mcp-session-id': sessionId })).status, 200);
    const expiry = (Math.floor(Date.now() / 1000) + 3) * 1000;
    await new Promise((resolve) => setTimeout(resolve, expiry - Date.now()));
    const expired = await post(demo, ping, shortLived, { 'mcp-session-id': sessionId });
    assert.equal([expired.status, ((await expired.json()) as { code: string }).code], [401, 'token_expired']);
    const challenge = expired.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer .*error="invalid_token"/);
    assert.match(challenge, `resource_metadata="${demo.service.url}/.well-known/oauth-protected-resource"`);
    const metadata = await (await demo.service.request('/.well-known/oauth-protected-resource', { token: null })).json();
    assert.equal(metadata, { resource: `${demo.service.url}/mcp`, authorization_servers: [ISSUER], bearer_methods_supported: ['header'], resource_name: 'vdb-service' });
    assert.is((await post(demo, ping, await jwt('analyst', ['analyst']), { 'mcp-session-id': sessionId })).status, 200);
    assert.is((await post(demo, ping, await jwt('someone-else', ['analyst']), { 'mcp-session-id': sessionId })).status, 403);
  });

  test('a session reads its caller from each request: the same subject\'s token with other roles sees what those roles see, at once', async ({ demo, analystToken }) => {
    const sessionId = await openSession(demo, analystToken);
    const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const tools = async (token: string) => {
      const answer = await post(demo, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, token, session);
      return ((await answer.json()) as { result: { tools: Tool[] } }).result.tools.map((tool) => tool.name);
    };
    const rows = async (token: string) => {
      const answer = await post(demo, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_sql', arguments: { vdb: 'retail', version: '1', sql: 'select count(*)::int as n from sales.orders' } } }, token, session);
      return ((await answer.json()) as { result: CallToolResult }).result;
    };
    assert.ok((await tools(analystToken)).includes('query_customer_orders'));
    assert.is((await rows(analystToken)).isError, undefined);
    const demoted = await jwt('analyst', ['visitor']);
    assert.not.ok((await tools(demoted)).includes('query_customer_orders'));
    assert.equal([(await rows(demoted)).isError, codeOf(await rows(demoted))], [true, 'forbidden']);
    assert.ok((await tools(analystToken)).includes('query_customer_orders'));
  });

  test('a caller without a data role on a VDB: none of its tools, resources or catalog, and a refusal that names nothing of it', async ({ demo }) => {
    const strangerToken = await jwt('stranger', ['visitor']);
    const stranger = await mcpClient(demo.service, strangerToken);
    try {
      const names = (await stranger.listTools()).tools.map((tool) => tool.name).sort();
      assert.equal(names, ['ask', 'describe_vdb', 'list_metrics', 'list_vdbs', 'query_metrics', 'run_sql']);
      // retail 2 has no data roles: complete access for every caller
      assert.equal((await stranger.listResources()).resources.map((resource) => resource.uri), ['vdb://retail/2/catalog']);
      const read = await stranger.readResource({ uri: 'vdb://retail/1/catalog' }).then(() => undefined, (error: { code?: number }) => error.code);
      assert.is(read, -32002);
      const access = (await call(stranger, 'list_vdbs')).structuredContent as { vdbs: { name: string; version: string; access: string; state?: string }[] };
      assert.equal(access.vdbs.map((vdb) => `${vdb.name}@${vdb.version}:${vdb.access}`), ['retail@1:unavailable', 'retail@2:complete', 'retail-crm@1:unavailable']);
      // of a VDB it may not use, only that it exists; of retail 2 what it is, as the HTTP list says
      assert.equal(access.vdbs.filter((vdb) => vdb.access === 'unavailable'), [{ name: 'retail', version: '1', access: 'unavailable' }, { name: 'retail-crm', version: '1', access: 'unavailable' }]);
      const route = (await (await demo.service.request('/api/v1/vdbs', { token: strangerToken })).json()) as { vdbs: unknown[] };
      assert.equal(access.vdbs.map(({ state: _state, ...listed }) => listed), route.vdbs);
      assert.is(access.vdbs[1]?.state, 'invalid');
      for (const [tool, args] of [
        ['describe_vdb', { vdb: 'retail', version: '1' }],
        ['run_sql', { vdb: 'retail', version: '1', sql: 'select id from sales.orders' }],
        ['list_metrics', { vdb: 'retail', version: '1' }],
        ['query_customer_orders', { customerId: 1 }],
      ] as const) {
        const refused = await call(stranger, tool, args);
        assert.is(refused.isError, true, tool);
        // the tool's own name is the caller's; nothing else of the VDB's
        assert.not.match(text(refused).replace(tool, ''), /orders|customers|email/, tool);
      }
    } finally {
      await stranger.close();
    }
  });

  test('the analyst never sees an email through run_sql: casts, functions, aggregates, whole rows, aliases, subqueries, federation; a refusal names no column the statement did not', async ({ analyst, admin }) => {
    const control = await call(admin, 'run_sql', { vdb: 'retail', version: '1', sql: 'select email from sales.customers where id = 1' });
    assert.match(text(control), EMAIL_VALUE);
    const retail = [
      'select email::text as e from sales.customers', 'select cast(email as varchar(200)) as e from sales.customers', 'select upper(email) as e from sales.customers',
      'select split_part(email, \'@\', 2) as domain from sales.customers', 'select max(email) as e from sales.customers', 'select string_agg(email, \',\') as e from sales.customers',
      'select count(distinct email) as n from sales.customers', 'select id from sales.customers order by email', 'select id from sales.customers group by id, email',
      'select e from (select email as e from sales.customers) x', 'with x as (select email from sales.customers) select * from x',
      'select (select email from sales.customers c2 where c2.id = o.customer_id) as e from sales.orders o', 'select id from sales.customers where email like $1',
      'select * from sales.customers', 'table sales.customers', 'select c from sales.customers c', 'select row_to_json(c) as j from sales.customers c',
      'select to_jsonb(c.*) as j from sales.customers c', 'select c::text as t from sales.customers c', 'select json_agg(c) as j from sales.customers c',
      'select (c).email from sales.customers c', 'select email(c) from sales.customers c', 'select x.* from sales.customers x(a, b, c, d, e)',
      'select * from sales.orders o join sales.customers c on c.id = o.customer_id', 'select * from sales.customers natural join sales.orders',
      'select query_to_xml(\'select email from sales.customers\', true, true, \'\') as x', 'select * from information_schema.columns',
    ];
    const federated = [
      'select c.email, r.manager from sales.customers c join crm.regions r on r.name = c.region',
      'select c.*, r.manager from sales.customers c join crm.regions r on r.name = c.region',
      'select count(c.email) as n from sales.customers c join crm.regions r on r.name = c.region',
    ];
    for (const [vdb, sql] of [...retail.map((sql) => ['retail', sql]), ...federated.map((sql) => ['retail-crm', sql])] as const) {
      const result = await call(analyst, 'run_sql', { vdb, version: '1', sql, params: ['%@%'] });
      assert.is(result.isError, true, sql);
      assert.is(codeOf(result), 'forbidden', `${sql}: ${text(result)}`);
      assert.not.match(JSON.stringify(result), EMAIL_VALUE, sql);
      if (!/email/.test(sql)) assert.not.match(JSON.stringify(result), /email/i, sql);
    }
    // an alias the analyst gives a column it may read is no way around the grants: the third column is name
    const aliased = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql: 'select e from sales.customers c(i, n, e)' });
    assert.not.match(JSON.stringify(aliased), EMAIL_VALUE);
  });

  test('the analyst never sees an email through describe_vdb, list_metrics, query_metrics, the resources or ask (its artifacts decoded)', async ({ analyst }) => {
    for (const [tool, args] of [
      ['describe_vdb', { vdb: 'retail', version: '1' }], ['describe_vdb', { vdb: 'retail-crm', version: '1' }], ['list_metrics', { vdb: 'retail', version: '1' }],
    ] as const) {
      const result = await call(analyst, tool, args);
      assert.is(result.isError, undefined, text(result));
      assert.not.match(JSON.stringify(result), EMAIL, tool);
    }
    for (const uri of ['vdb://retail/1/catalog', 'vdb://retail/1/semantic-package', 'vdb://retail-crm/1/catalog']) {
      assert.not.match(JSON.stringify(await analyst.readResource({ uri })), EMAIL, uri);
    }
    for (const query of [
      { dimensions: ['customers.email'], measures: ['order_count'] }, { measures: ['COUNT(DISTINCT customers.email)'] }, { fields: ['customers.email'] },
      { dimensions: ['customers.region'], measures: ['order_count'], where: 'customers.email LIKE \'%@%\'' },
    ]) {
      const result = await call(analyst, 'query_metrics', { vdb: 'retail', version: '1', ...query });
      assert.equal([result.isError, codeOf(result)], [true, 'forbidden'], JSON.stringify(query));
      assert.not.match(JSON.stringify(result), EMAIL_VALUE);
    }
    for (const goal of ['List the email addresses of all customers', 'select email from sales.customers', 'customer_count by customers.email', 'select * from sales.customers']) {
      const result = await call(analyst, 'ask', { capability: 'answer', vdb: 'retail', version: '1', goal });
      const artifacts = ((result.structuredContent as { artifacts?: { content: { data: string } }[] } | undefined)?.artifacts ?? [])
        .map((artifact) => Buffer.from(artifact.content.data, 'base64').toString('utf8'));
      assert.not.match([text(result), ...artifacts].join('\n'), EMAIL_VALUE, goal);
    }
  });

  test('run_sql refuses a write in every form, for the clerk whose role may write too, and nothing changes', async ({ demo, admin }) => {
    const count = async () => (await demo.raw.query('select (select count(*) from sales.orders)::int as orders, (select count(*) from sales.products)::int as products, (select max(id) from sales.orders)::int as top', [])).rows[0];
    const before = await count();
    for (const sql of [
      'insert into sales.products (sku, name, category, unit_price) values (\'x\', \'x\', \'x\', 1)', 'update sales.orders set total = 0', 'delete from sales.orders',
      'merge into sales.orders o using (select 1 as id) s on o.id = s.id when matched then delete', 'truncate sales.orders',
      'with d as (delete from sales.orders returning id) select count(*) from d', 'with u as (update sales.orders set total = 0 returning id) select id from u',
      'select nextval(\'sales.orders_id_seq\')', 'select setval(\'sales.orders_id_seq\', 1)', 'select set_config(\'role\', \'postgres\', false)', 'select pg_advisory_lock(1)',
      'select lo_import(\'/etc/passwd\')', 'select pg_notify(\'x\', \'y\')', 'copy sales.orders to stdout', 'copy (select 1) to \'/tmp/vdb-mcp-copy\'',
      'copy sales.products from stdin', 'set role postgres', 'reset role', 'set session authorization postgres', 'set statement_timeout = 0', 'begin', 'start transaction',
      'commit', 'rollback', 'savepoint s', 'select * from sales.orders for update', 'explain analyze delete from sales.orders', 'do $$ begin delete from sales.orders; end $$',
      'prepare p as delete from sales.orders', 'create table sales.x (a int)', 'create temp table t as select 1 as a', 'select * into temp t2 from sales.orders',
      'grant select on sales.orders to public', 'lock table sales.orders', 'vacuum sales.orders', 'discard all', 'select 1; delete from sales.orders',
    ]) {
      const result = await call(admin, 'run_sql', { vdb: 'retail', version: '1', sql });
      assert.equal([result.isError, codeOf(result)], [true, 'forbidden'], `${sql}: ${text(result)}`);
    }
    assert.equal(await count(), before);
  });

  test('the stdio bridge: answers what it was sent, then exits 0 when its stdin closes, ending its session on the endpoint', async ({ demo, analystToken }) => {
    const ended = await metric(demo, 'vdb_mcp_requests_total{method="session_end"}');
    const bridge = spawn(process.execPath, [join(projectRoot, 'dist', 'core', 'cli.js'), 'mcp-stdio', '--url', `${demo.service.url}/mcp`, '--token-env', 'VDB_MCP_TOKEN'], {
      env: { VDB_MCP_TOKEN: analystToken, PATH: process.env['PATH'] ?? '' },
    });
    let stdout = '';
    bridge.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => {
      // a bridge that never exits fails the test instead of hanging the suite
      const watchdog = setTimeout(() => bridge.kill('SIGKILL'), 120_000);
      bridge.once('close', (code) => {
        clearTimeout(watchdog);
        resolve(code);
      });
    });
    const lines = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_vdbs', arguments: {} } },
    ];
    // as `cat requests.jsonl | vdb-service mcp-stdio …` sends them: stdin ends right after
    bridge.stdin.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    assert.is(await exited, 0);
    const answers = stdout.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: number; result?: Record<string, unknown> });
    // forwarded as they came, so answered in either order
    assert.equal(answers.map((answer) => [answer.id, answer.result !== undefined]).sort(), [[1, true], [2, true]], stdout);
    assert.is(await metric(demo, 'vdb_mcp_requests_total{method="session_end"}'), ended + 1);
  });

  test.run();
}

forEachBackend(suiteOn, ['postgres']);
