import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { forEachBackend, skippedHere, type Backend } from '../../support/backends.js';
import { mcpClient, startMcpDemo, type McpDemo } from '../../support/mcp-service.js';
import { ADMIN_TOKEN, ANALYST_TOKEN } from '../../support/test-service.js';

interface Context {
  demo: McpDemo;
  analyst: Client;
  admin: Client;
}

/** An email address of the seed, or the column that holds them, in any form. */
const EMAIL = /@example\.|email/i;

const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n');

async function http(demo: McpDemo, path: string, body: unknown, token: string): Promise<Record<string, unknown>> {
  const response = await demo.service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return (await response.json()) as Record<string, unknown>;
}

/**
 * The MCP endpoint through the SDK's own client (`Client` + `StreamableHTTPClientTransport`) on each
 * backend of the PostgreSQL family: every tool, the analyst's grants in every answer, writes refused, the
 * bounds, and the same answers as the HTTP routes the tools mirror.
 */
// a named function: the test runner reads the families from the call below, the first one in the file
function suiteOn(backend: Backend): void {
  const test = suite<Context>(`${backend.name}: MCP tools through the SDK client`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.demo = await startMcpDemo(backend, { server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 3000, maxResultBytes: 20_000 } });
    context.analyst = await mcpClient(context.demo.service, ANALYST_TOKEN);
    context.admin = await mcpClient(context.demo.service, ADMIN_TOKEN);
  });
  test.after(async ({ demo, analyst, admin }) => {
    await analyst?.close();
    await admin?.close();
    await demo?.close();
  });

  test('the tool list: the fixed tools, one per query and action, ask; read tools read-only, actions destructive; no email for the analyst', async ({ analyst, admin }) => {
    const { tools } = await analyst.listTools();
    const names = tools.map((tool) => tool.name).sort();
    assert.equal(names, [
      'action_cancel_order', 'action_place_order', 'ask', 'describe_vdb', 'list_metrics', 'list_vdbs', 'query_customer_orders', 'query_metrics',
      'query_product_search', 'query_region_revenue', 'query_table_counts', 'run_sql',
    ]);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const name of ['list_vdbs', 'describe_vdb', 'run_sql', 'list_metrics', 'query_metrics', 'query_customer_orders']) {
      assert.is(byName.get(name)?.annotations?.readOnlyHint, true, name);
    }
    assert.equal([byName.get('action_cancel_order')?.annotations?.destructiveHint, byName.get('action_cancel_order')?.annotations?.readOnlyHint], [true, false]);
    const orders = byName.get('query_customer_orders');
    assert.equal(orders?.inputSchema.required, ['customerId']);
    assert.match(orders?.description ?? '', 'Orders of a customer, newest first');
    assert.not.match(JSON.stringify(tools), EMAIL);
    assert.equal((await admin.listTools()).tools.length, tools.length);
  });

  test('a query tool\'s input schema is its OpenAPI operation\'s request body', async ({ demo, analyst }) => {
    const document = (await (await demo.service.request('/api/v1/openapi.json')).json()) as { paths: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }> };
    const operation = document.paths['/api/v1/query/perform/customer_orders']?.post;
    const tool = (await analyst.listTools()).tools.find((candidate) => candidate.name === 'query_customer_orders');
    assert.equal(tool?.inputSchema, operation?.requestBody.content['application/json']?.schema);
  });

  test('list_vdbs: each version with its activation state and the caller\'s access', async ({ analyst }) => {
    const result = await call(analyst, 'list_vdbs');
    assert.is(result.isError, undefined);
    const vdbs = (result.structuredContent as { vdbs: { name: string; version: string; state: string; access: string }[] }).vdbs;
    assert.equal(vdbs.map(({ name, version, state, access }) => [name, version, state, access]), [['retail', '1', 'active', 'restricted'], ['retail', '2', 'invalid', 'complete'], ['retail-crm', '1', 'catalogOnly', 'restricted']]);
  });

  test('describe_vdb: the analyst\'s catalog and semantic model hold no email; the clerk\'s do; the same catalog as the HTTP route', async ({ demo, analyst, admin }) => {
    const mine = await call(analyst, 'describe_vdb', { vdb: 'retail', version: '1' });
    assert.is(mine.isError, undefined, text(mine));
    const described = mine.structuredContent as Record<string, unknown> & { relations: { name: string; columns: { name: string }[] }[]; semantic: { metrics: unknown[]; datasets: unknown[] } };
    assert.equal(described.relations.find((relation) => relation.name === 'customers')?.columns.map((column) => column.name), ['id', 'name', 'region', 'created_at']);
    assert.ok(described.semantic.metrics.length > 0 && described.semantic.datasets.length > 0);
    assert.not.match(text(mine), EMAIL);
    assert.not.match(JSON.stringify(mine.structuredContent), EMAIL);
    const route = await (await demo.service.request('/api/v1/vdbs/retail/versions/1/catalog', { token: ANALYST_TOKEN })).json();
    const { semantic: _semantic, ...catalog } = described;
    assert.equal(catalog, route);
    assert.match(text(await call(admin, 'describe_vdb', { vdb: 'retail', version: '1' })), 'email');
  });

  test('describe_vdb without a version on a VDB of two versions, or of an unknown VDB: the service\'s codes', async ({ analyst }) => {
    const ambiguous = await call(analyst, 'describe_vdb', { vdb: 'retail' });
    assert.equal([ambiguous.isError, text(ambiguous).split(':')[0]], [true, 'ambiguous_vdb_version']);
    const unknown = await call(analyst, 'describe_vdb', { vdb: 'nope', version: '1' });
    assert.equal([unknown.isError, text(unknown).split(':')[0]], [true, 'vdb_not_found']);
    const missing = await call(analyst, 'describe_vdb', {});
    assert.equal([missing.isError, text(missing).split(':')[0]], [true, 'missing_fields']);
  });

  test('run_sql: $1 parameters bound, rows with their columns, maxRows cuts and says so', async ({ analyst }) => {
    const one = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql: 'select id, name, region from sales.customers where id = $1', params: [3] });
    assert.is(one.isError, undefined, text(one));
    const rows = one.structuredContent as { rows: Record<string, unknown>[]; rowCount: number; truncated: boolean; columns: { name: string; logicalType: string }[] };
    assert.equal([rows.rowCount, rows.truncated, rows.rows[0]?.['id'], rows.columns.map((column) => column.name)], [1, false, 3, ['id', 'name', 'region']]);
    const cut = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql: 'select id from sales.orders order by id', maxRows: 2 });
    assert.equal([(cut.structuredContent as typeof rows).rowCount, (cut.structuredContent as typeof rows).truncated, (cut.structuredContent as typeof rows).rows], [2, true, [{ id: 1 }, { id: 2 }]]);
  });

  test('run_sql: an email asked for is refused naming the denial, in every spelling; no email value comes back', async ({ analyst }) => {
    for (const sql of [
      'select email from sales.customers',
      'select * from sales.customers',
      'select c.* from sales.customers c',
      'select (select email from sales.customers limit 1) as x',
      'select id from sales.customers where email like \'%@%\'',
    ]) {
      const result = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql });
      assert.is(result.isError, true, sql);
      assert.match(text(result), /^forbidden: .*\(denial: [a-z_]+\)$/, sql);
      assert.not.match(text(result), /@example\./);
    }
  });

  test('run_sql: writes are refused, and change nothing', async ({ demo, analyst, admin }) => {
    const before = (await demo.raw.query('select count(*) as n from sales.orders', [])).rows[0]?.['n'];
    for (const [client, sql] of [
      [analyst, 'delete from sales.orders'],
      [admin, 'update sales.orders set total = 0'],
      [admin, 'insert into sales.products (name, price) values (\'x\', 1)'],
      [admin, 'select 1; delete from sales.orders'],
    ] as const) {
      const result = await call(client, 'run_sql', { vdb: 'retail', version: '1', sql });
      assert.is(result.isError, true, sql);
      assert.match(text(result), /^forbidden: /, sql);
    }
    assert.equal((await demo.raw.query('select count(*) as n from sales.orders', [])).rows[0]?.['n'], before);
  });

  test('run_sql: bad arguments answer the service\'s own codes', async ({ analyst }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ vdb: 'retail', version: '1' }, 'missing_fields'],
      [{ vdb: 'retail', version: '1', sql: 'select $1::int as x', params: 'no' }, 'invalid_body'],
      [{ vdb: 'retail', version: '1', sql: 'select $2::int as x', params: [1] }, 'invalid_body'],
      [{ vdb: 'retail', version: '1', sql: 'select 1 as x', maxRows: -1 }, 'invalid_body'],
    ];
    for (const [args, code] of cases) {
      const result = await call(analyst, 'run_sql', args);
      assert.equal([result.isError, text(result).split(':')[0]], [true, code], JSON.stringify(args));
    }
  });

  test('query_<name>: the same answer as its HTTP route; a missing field answers missing_fields', async ({ demo, analyst }) => {
    const result = await call(analyst, 'query_customer_orders', { customerId: 7 });
    const route = await http(demo, '/api/v1/query/perform/customer_orders', { customerId: 7 }, ANALYST_TOKEN);
    assert.equal(result.structuredContent, { ...route, truncated: false });
    assert.ok((route['rows'] as unknown[]).length > 0);
    const missing = await call(analyst, 'query_customer_orders', {});
    assert.equal([missing.isError, text(missing)], [true, 'missing_fields: the body lacks needed field customerId']);
  });

  test('action_<name>: refused for the analyst as on HTTP; the clerk\'s dry run runs', async ({ demo, analyst, admin }) => {
    const refused = await call(analyst, 'action_cancel_order', { orderId: 1, dryRun: true });
    const route = await http(demo, '/api/v1/actions/run/cancel_order', { orderId: 1, dryRun: true }, ANALYST_TOKEN);
    assert.equal([refused.isError, text(refused).split(':')[0]], [true, route['code']]);
    const order = (await demo.raw.query('select id from sales.orders where status in (\'pending\', \'paid\') order by id limit 1', [])).rows[0]?.['id'];
    const dry = await call(admin, 'action_cancel_order', { orderId: order, dryRun: true });
    assert.is(dry.isError, undefined, text(dry));
    assert.is((dry.structuredContent as { status: string }).status, 'completed');
  });

  test('action_<name> with idempotencyKey: a retried call answers the first run without running again; other arguments are refused', async ({ demo, admin }) => {
    const order = (await demo.raw.query('select id from sales.orders where status in (\'pending\', \'paid\') order by id limit 1', [])).rows[0]?.['id'];
    const runs = async () => ((await (await demo.service.request('/api/v1/admin/actions/runs?action=cancel_order')).json()) as { runs: unknown[] }).runs.length;
    const before = await runs();
    const key = `mcp-retry-${randomUUID()}`;
    const first = await call(admin, 'action_cancel_order', { orderId: order, dryRun: true, idempotencyKey: key });
    assert.is(first.isError, undefined, text(first));
    const again = await call(admin, 'action_cancel_order', { orderId: order, dryRun: true, idempotencyKey: key });
    assert.equal(again.structuredContent, first.structuredContent);
    assert.is(await runs(), before + 1);
    const other = await call(admin, 'action_cancel_order', { orderId: order, dryRun: false, idempotencyKey: key });
    assert.equal([other.isError, text(other).split(':')[0]], [true, 'idempotency_key_reused']);
    const bad = await call(admin, 'action_cancel_order', { orderId: order, dryRun: true, idempotencyKey: 7 });
    assert.equal([bad.isError, text(bad).split(':')[0]], [true, 'invalid_idempotency_key']);
  });

  test('list_metrics and query_metrics: the HTTP semantic route\'s answer; bad input answers the service\'s codes', async ({ demo, analyst }) => {
    const metrics = await call(analyst, 'list_metrics', { vdb: 'retail', version: '1' });
    const names = (metrics.structuredContent as { metrics: { name: string }[] }).metrics.map((metric) => metric.name);
    assert.ok(names.length > 0, text(metrics));
    const query = { dimensions: ['customers.region'], measures: [names[0]], orderBy: ['customers.region'] };
    const result = await call(analyst, 'query_metrics', { vdb: 'retail', version: '1', ...query });
    assert.is(result.isError, undefined, text(result));
    const route = await http(demo, '/api/v1/semantic/vdbs/retail/versions/1/query', query, ANALYST_TOKEN);
    assert.equal(result.structuredContent, { ...route, truncated: false });
    const explained = await call(analyst, 'query_metrics', { vdb: 'retail', version: '1', ...query, explain: true });
    assert.type((explained.structuredContent as { sql: unknown }).sql, 'string');
    const bad = await call(analyst, 'query_metrics', { vdb: 'retail', version: '1', measures: 'x' });
    assert.is(bad.isError, true);
    const inactive = await call(analyst, 'list_metrics', { vdb: 'retail', version: '2' });
    assert.equal([inactive.isError, text(inactive).split(':')[0]], [true, 'semantic_unavailable']);
  });

  test('ask: the Task API\'s snapshot, its answer as text', async ({ analyst }) => {
    const result = await call(analyst, 'ask', { capability: 'answer', vdb: 'retail', version: '1', goal: 'How many orders are there?' });
    assert.is(result.isError, undefined, text(result));
    assert.type((result.structuredContent as { state: unknown }).state, 'string');
    assert.not.match(text(result), /@example\./);
  });

  test('resources: the catalog and the semantic package, cut to the analyst\'s grants', async ({ analyst, admin }) => {
    const { resources } = await analyst.listResources();
    // retail 2 has no data roles (complete access for every caller) and no active package
    assert.equal(resources.map((resource) => resource.uri).sort(), ['vdb://retail-crm/1/catalog', 'vdb://retail/1/catalog', 'vdb://retail/1/semantic-package', 'vdb://retail/2/catalog']);
    for (const uri of ['vdb://retail/1/catalog', 'vdb://retail/1/semantic-package']) {
      const read = await analyst.readResource({ uri });
      const content = read.contents[0] as { text: string };
      assert.ok(content.text.length > 2, uri);
      assert.not.match(content.text, EMAIL, uri);
    }
    const clerk = await admin.readResource({ uri: 'vdb://retail/1/catalog' });
    assert.match((clerk.contents[0] as { text: string }).text, 'email');
    const templates = await analyst.listResourceTemplates();
    assert.equal(templates.resourceTemplates.map((template) => template.uriTemplate), ['vdb://{vdb}/{version}/catalog', 'vdb://{vdb}/{version}/semantic-package']);
  });

  test('an unknown tool is an error result; the metrics count tool calls by tool and outcome; the access log has a line per call', async ({ demo, analyst }) => {
    const unknown = await call(analyst, 'no_such_tool');
    assert.equal([unknown.isError, text(unknown).split(':')[0]], [true, 'not_found']);
    const metrics = await (await demo.service.request('/observe/metrics')).text();
    assert.match(metrics, /vdb_mcp_tool_calls_total\{tool="run_sql",outcome="ok"\} [1-9]/);
    assert.match(metrics, /vdb_mcp_tool_calls_total\{tool="run_sql",outcome="error"\} [1-9]/);
    assert.match(metrics, /vdb_mcp_tool_calls_total\{tool="unknown",outcome="error"\} 1/);
    assert.match(metrics, /vdb_mcp_requests_total\{method="tools\/call"\} [1-9]/);
    const lines = demo.service.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line['msg'] === 'mcp tool call');
    assert.ok(lines.some((line) => line['tool'] === 'query_customer_orders' && line['outcome'] === 'ok' && typeof line['ms'] === 'number'));
    assert.ok(lines.some((line) => line['tool'] === 'run_sql' && line['outcome'] === 'error' && line['code'] === 'forbidden'));
  });
  test('run_sql: bounds: a result over server.maxResultBytes is cut within it, and says so', async ({ analyst }) => {
    const big = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql: 'select o.id, o.status, o.total, l.line_no from sales.orders o join sales.order_lines l on l.order_id = o.id' });
    const shaped = big.structuredContent as { rows: unknown[]; rowCount: number; truncated: boolean };
    assert.equal([big.isError, shaped.truncated, shaped.rowCount], [undefined, true, shaped.rows.length], text(big).slice(0, 200));
    assert.ok(JSON.stringify(shaped.rows).length <= 20_000 && shaped.rows.length > 0 && shaped.rows.length < 375, String(shaped.rows.length));
  });

  // last: on the in-memory PGlite the statement out of time ends the database's worker, and the database with it
  test('run_sql: bounds: a statement over server.requestTimeoutMs answers statement_timeout', async ({ analyst }) => {
    const slow = await call(analyst, 'run_sql', {
      vdb: 'retail', version: '1', sql: 'with recursive r(n) as (select 1 union all select n + 1 from r where n < 10000000000) select count(*) as n from r',
    });
    assert.equal([slow.isError, text(slow).split(':')[0]], [true, 'statement_timeout'], text(slow));
    if (backend.name === 'pglite') return;
    const after = await call(analyst, 'run_sql', { vdb: 'retail', version: '1', sql: 'select count(*)::int as n from sales.products' });
    assert.equal((after.structuredContent as { rows: unknown[] }).rows, [{ n: 30 }], text(after));
  });

  test.run();
}

forEachBackend(suiteOn, ['postgres']);
