import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { HOSTILE_STRINGS, HOSTILE_VALUES } from '../../plugins/template-twing/hostile-inputs.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, demoConfig, projectRoot, startTestService, type TestService } from '../../support/test-service.js';
import { actionDefinitions, FILTER_CASES, queryDefinitions, schemaSetup, SHOP_VDB, TEST_SCHEMA } from './endpoint-fixtures.js';
import { FaultyDatasource } from './faulty-datasource.js';
import { skippedHere } from '../../support/backends.js';

export interface EndpointBackend {
  name: string;
  family: 'postgres' | 'mysql';
  /** Why the backend is not available here; the suite is skipped. */
  skip?: string | undefined;
  open(): Promise<Datasource>;
  /** Close the datasource after the suite (not the process's shared PGlite). */
  closeAfter: boolean;
  /** PGlite decodes result text with a TextDecoder that drops a leading U+FEFF (the stored value keeps it). */
  readsWithoutLeadingBom?: boolean;
}

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

const MAX_BODY_BYTES = 256 * 1024;
const S = TEST_SCHEMA;

/**
 * The endpoint integration suite on one backend: the real service on port 0 serving the `shop` VDB over the
 * backend, requests over HTTP, and the tables read back directly to prove what changed and what did not.
 */
export function runEndpointSuite(backend: EndpointBackend): void {
  const test = suite<{ service: TestService; db: FaultyDatasource; raw: Datasource }>(`${backend.name}: query and action endpoints`);
  if (skippedHere(test, backend)) return;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of schemaSetup(backend.family)) await context.raw.query(statement, []);
    context.db = new FaultyDatasource(context.raw);
    const files: Record<string, string> = { 'bundle/vdbs/shop.yaml': SHOP_VDB };
    for (const [name, text] of Object.entries(queryDefinitions(backend.family))) files[`bundle/queries/${name}.yaml`] = text;
    for (const [name, text] of Object.entries(actionDefinitions())) files[`bundle/actions/${name}.yaml`] = text;
    context.service = await startTestService({
      config: demoConfig({
        descriptors: './bundle',
        server: { host: '127.0.0.1', port: 0, maxBodyBytes: MAX_BODY_BYTES },
        plugins: [{ path: join(projectRoot, 'dist/test/fixtures/plugins/greeting'), config: { salutation: 'Welcome' } }],
      }),
      files,
      datasources: { retail_db: context.db },
    });
  });

  test.after(async ({ service, raw }) => {
    await service?.close();
    if (raw) await dropSyncedRoles(service, raw);
    if (backend.closeAfter) await raw?.close();
  });

  const call = async (service: TestService, path: string, body: unknown, init: { token?: string | null; contentType?: string } = {}): Promise<Reply> => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    const response = await service.request(path, {
      method: 'POST', body: text, headers: { 'content-type': init.contentType ?? 'application/json' }, token: init.token,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const query = (service: TestService, name: string, body: unknown, init?: { token?: string | null; contentType?: string }) =>
    call(service, `/api/v1/query/perform/${name}`, body, init);
  const action = (service: TestService, name: string, body: unknown, init?: { token?: string | null }) =>
    call(service, `/api/v1/actions/run/${name}`, body, init);
  const rowsOf = async (raw: Datasource, sql: string, bindings: unknown[] = []) => (await raw.query(sql, bindings)).rows;
  const snapshot = async (raw: Datasource) => ({
    orders: await rowsOf(raw, `select * from ${S}.orders order by id`),
    lines: await rowsOf(raw, `select * from ${S}.order_lines order by order_id, line_no`),
    products: await rowsOf(raw, `select * from ${S}.products order by id`),
    jobs: await rowsOf(raw, `select * from ${S}.jobs order by reference`),
  });

  test('a query answers rows, rowCount and columns with logical types; JSON and YAML bodies read alike', async ({ service }) => {
    const json = await query(service, 'products_by_ids', { ids: [4, 1] });
    assert.is(json.status, 200, JSON.stringify(json.body));
    assert.equal(json.body['rows'], [{ id: 1, name: 'Tea', stock: 10 }, { id: 4, name: 'Water', stock: 100 }]);
    assert.is(json.body['rowCount'], 2);
    assert.equal(json.body['columns'], [{ name: 'id', logicalType: 'integer' }, { name: 'name', logicalType: 'string' }, { name: 'stock', logicalType: 'integer' }]);
    const yaml = await query(service, 'products_by_ids', 'ids: [4, 1]\n', { contentType: 'application/yaml' });
    assert.equal(yaml.body, json.body);
  });

  test('fromYamlArrayToIterable takes a list or the YAML text of one; filterValWhenVarFalse drops the first separator', async ({ service }) => {
    const text = await query(service, 'products_by_ids', { ids: '[2, 3]' });
    assert.equal((text.body['rows'] as { id: number }[]).map((row) => row.id), [2, 3]);
    const single = await query(service, 'products_by_ids', { ids: [3] });
    assert.equal((single.body['rows'] as { id: number }[]).map((row) => row.id), [3]);
    const notAList = await query(service, 'products_by_ids', { ids: 'a: b' });
    assert.is(notAList.status, 400);
    assert.is(notAList.body['code'], 'invalid_body');
  });

  test('a UNION ALL built in a loop with checked identifiers; an unknown identifier is refused', async ({ service }) => {
    const counts = await query(service, 'relation_counts', { relations: ['products', 'customers'] });
    assert.is(counts.status, 200, JSON.stringify(counts.body));
    assert.equal(counts.body['rows'], [{ relation: 'products', row_count: backend.family === 'postgres' ? '4' : 4 }, { relation: 'customers', row_count: backend.family === 'postgres' ? '4' : 4 }].map((row) => ({ ...row, row_count: String(row.row_count) })));
    const unknown = await query(service, 'relation_counts', { relations: ['products; drop table x'] });
    assert.is(unknown.status, 400);
    assert.is(unknown.body['code'], 'unknown_identifier');
  });

  test('uuid(), a built-in module function and a function of an extra plugin loaded by path', async ({ service }) => {
    const reply = await query(service, 'functions', { title: 'Hello Wide World', name: 'Ada' });
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    const [row] = reply.body['rows'] as Record<string, string>[];
    assert.is(row?.['slug'], 'hello-wide-world');
    assert.is(row?.['greeting'], 'Welcome, Ada!');
    assert.match(row?.['id'] ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  test('errors: missing_fields, unknown_query, unknown_action, invalid_body, unsupported_media_type, body_too_large, 401', async ({ service }) => {
    const missing = await query(service, 'products_by_ids', { other: 1 });
    assert.equal([missing.status, missing.body['code'], missing.body['details']], [400, 'missing_fields', { missing: ['ids'] }]);
    const missingAction = await action(service, 'place_order', { customerId: 1 });
    assert.equal([missingAction.status, missingAction.body['code'], missingAction.body['details']], [400, 'missing_fields', { missing: ['lines'] }]);
    assert.equal([(await query(service, 'nope', {})).status, (await query(service, 'nope', {})).body['code']], [404, 'unknown_query']);
    assert.equal([(await action(service, 'nope', {})).status, (await action(service, 'nope', {})).body['code']], [404, 'unknown_action']);
    const list = await query(service, 'products_by_ids', [1, 2]);
    assert.equal([list.status, list.body['code']], [400, 'invalid_body']);
    const broken = await query(service, 'products_by_ids', '{"ids": [1,');
    assert.equal([broken.status, broken.body['code']], [400, 'invalid_body']);
    const plain = await query(service, 'products_by_ids', 'ids=1', { contentType: 'text/plain' });
    assert.equal([plain.status, plain.body['code']], [415, 'unsupported_media_type']);
    const huge = await query(service, 'products_by_ids', { ids: [1], pad: 'x'.repeat(MAX_BODY_BYTES) });
    assert.equal([huge.status, huge.body['code']], [413, 'body_too_large']);
    const anonymous = await query(service, 'products_by_ids', { ids: [1] }, { token: null });
    assert.equal([anonymous.status, anonymous.body['code']], [401, 'credentials_missing']);
  });

  test('a value the database refuses names the request field that held it', async ({ service }) => {
    // MySQL converts 'seven' to 0 without an error: only the PostgreSQL family refuses it
    if (backend.family !== 'postgres') return;
    const word = await query(service, 'orders_of_customer', { customerId: 'seven' });
    assert.equal([word.status, word.body['code'], word.body['details']], [400, 'invalid_body', { field: 'customerId' }]);
    assert.is(word.body['message'], 'customerId: "seven" is not a valid integer (query orders_of_customer, 22P02)');
    const cheap = await query(service, 'products_cheaper_than', { maxPrice: 'cheap' });
    assert.equal([cheap.status, cheap.body['message']], [400, 'maxPrice: "cheap" is not a valid number (query products_cheaper_than, 22P02)']);
  });

  test('data roles: a restricted caller is refused what its grants do not cover, and nothing runs', async ({ service, raw }) => {
    const products = await query(service, 'products_cheaper_than', { maxPrice: '5' }, { token: ANALYST_TOKEN });
    assert.is(products.status, 200, JSON.stringify(products.body));
    assert.equal((products.body['rows'] as { id: number }[]).map((row) => row.id), [1, 3, 4]);
    const orders = await query(service, 'orders_of_customer', { customerId: 1 }, { token: ANALYST_TOKEN });
    assert.equal([orders.status, orders.body['code'], (orders.body['details'] as Record<string, unknown>)['resource']], [403, 'forbidden', `${S}.orders`]);
    const before = await snapshot(raw);
    const restock = await action(service, 'restock', { productId: 1, stock: 99 }, { token: ANALYST_TOKEN });
    assert.equal([restock.status, restock.body['code'], (restock.body['details'] as Record<string, unknown>)['resource']], [403, 'forbidden', `${S}.products`]);
    const order = await action(service, 'place_order', { customerId: 1, lines: [{ productId: 1, quantity: 1 }] }, { token: ANALYST_TOKEN });
    assert.equal([order.status, order.body['code']], [403, 'forbidden']);
    assert.equal(await snapshot(raw), before);
    const allowed = await action(service, 'restock', { productId: 4, stock: 100 });
    assert.equal([allowed.status, allowed.body['operations']], [200, [{ name: 'set_stock', status: 'done', affectedRows: 1 }]]);
  });

  test('every filter operation, in an assertion that holds and one that fails with its message', async ({ service }) => {
    for (const { operation, field, matching, missing } of FILTER_CASES) {
      const name = `filter_${operation.toLowerCase()}`;
      const held = await action(service, name, matching);
      assert.is(held.status, 200, `${operation} ${JSON.stringify(matching)}: ${JSON.stringify(held.body)}`);
      assert.equal(held.body['operations'], [{ name: 'nothing', status: 'skipped', affectedRows: 0 }]);
      const failed = await action(service, name, missing);
      assert.is(failed.status, 409, `${operation} ${JSON.stringify(missing)}: ${JSON.stringify(failed.body)}`);
      assert.is(failed.body['code'], 'assertion_failed');
      assert.ok(String(failed.body['message']).startsWith(`no product where ${field} ${operation}`), String(failed.body['message']));
    }
  });

  test('place_order: assertions, insert, wait into the context, deferred ids, update; the rows are written', async ({ service, raw }) => {
    const reply = await action(service, 'place_order', { customerId: 2, lines: [{ productId: 1, quantity: 2 }, { productId: 4, quantity: 5 }], total: '14.50', notes: { gift: true, tags: ['a'] } });
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.is(reply.body['status'], 'completed');
    assert.equal((reply.body['operations'] as { name: string; status: string }[]).map(({ name, status }) => `${name}:${status}`),
      ['insert_order:done', 'insert_line_1:done', 'insert_line_2:done', 'set_total:done']);
    const order = (reply.body['context'] as Record<string, { id: number; reference: string }>)['order'];
    assert.match(order?.reference ?? '', /^[0-9a-f-]{36}$/);
    const [stored] = await rowsOf(raw, `select customer_id, total, notes from ${S}.orders where id = ?`, [order?.id]);
    assert.equal(stored, { customer_id: 2, total: '14.5', notes: { gift: true, tags: ['a'] } });
    const lines = await rowsOf(raw, `select line_no, product_id, quantity from ${S}.order_lines where order_id = ? order by line_no`, [order?.id]);
    assert.equal(lines, [{ line_no: 1, product_id: 1, quantity: 2 }, { line_no: 2, product_id: 4, quantity: 5 }]);
  });

  test('a failing assertion runs nothing; skipWhenTrue from a request value skips the operation', async ({ service, raw }) => {
    const before = await snapshot(raw);
    const unknownCustomer = await action(service, 'place_order', { customerId: 99, lines: [{ productId: 1, quantity: 1 }] });
    assert.equal([unknownCustomer.status, unknownCustomer.body['code'], unknownCustomer.body['message']], [409, 'assertion_failed', 'Customer 99 does not exist']);
    const noStock = await action(service, 'place_order', { customerId: 1, lines: [{ productId: 2, quantity: 1 }] });
    assert.equal([noStock.status, noStock.body['message']], [409, 'Product 2 lacks stock']);
    const dryRun = await action(service, 'restock', { productId: 1, stock: 1, dryRun: true });
    assert.equal([dryRun.status, dryRun.body['operations']], [200, [{ name: 'set_stock', status: 'skipped', affectedRows: 0 }]]);
    const badValue = await action(service, 'restock', { productId: 1, stock: 'many' });
    assert.equal([badValue.status, badValue.body['code']], [400, 'invalid_body']);
    // a value that passes its dataType but not the column: the conflict names the request field where the
    // driver quotes the value (the PostgreSQL family; MySQL reports the column only)
    const outOfRange = await action(service, 'restock', { productId: 1, stock: 99999999999 });
    assert.equal([outOfRange.status, outOfRange.body['code']], [409, 'operation_conflict'], JSON.stringify(outOfRange.body));
    if (backend.family === 'postgres') {
      assert.match(String(outOfRange.body['message']), /operation set_stock: stock: "99999999999" is out of range for an integer/);
      assert.is((outOfRange.body['details'] as Record<string, unknown>)['field'], 'stock');
    }
    assert.equal(await snapshot(raw), before);
  });

  test('compensation: the 3rd of 3 operations fails, the two done are undone in reverse, the tables are as before row by row', async ({ service, raw }) => {
    const before = await snapshot(raw);
    const reply = await action(service, 'place_order', { customerId: 3, lines: [{ productId: 1, quantity: 1 }, { productId: 4, quantity: 0 }] });
    assert.equal([reply.status, reply.body['code']], [409, 'operation_conflict'], JSON.stringify(reply.body));
    const details = reply.body['details'] as Record<string, unknown>;
    assert.is(details['failedOperation'], 'insert_line_2');
    assert.equal(details['operations'], [
      { name: 'insert_order', status: 'done', affectedRows: 1, compensation: 'compensated' },
      { name: 'insert_line_1', status: 'done', affectedRows: 1, compensation: 'compensated' },
      { name: 'insert_line_2', status: 'failed', affectedRows: 0, compensation: 'none' },
    ]);
    assert.equal(await snapshot(raw), before);
  });

  test('a datasource lost mid-action answers 503; a compensation that fails is reported and logged for repair', async ({ service, raw, db }) => {
    const before = await snapshot(raw);
    db.failNext(/order_lines/);
    const lost = await action(service, 'place_order', { customerId: 1, lines: [{ productId: 1, quantity: 1 }] });
    assert.equal([lost.status, lost.body['code']], [503, 'datasource_unavailable'], JSON.stringify(lost.body));
    assert.equal(await snapshot(raw), before);

    db.failNext(/order_lines/);
    db.failNext(/^delete/i);
    const stuck = await action(service, 'place_order', { customerId: 1, lines: [{ productId: 1, quantity: 1 }] });
    assert.is(stuck.status, 503);
    const operations = (stuck.body['details'] as { operations: { name: string; compensation: string }[] }).operations;
    assert.equal(operations.map(({ name, compensation }) => `${name}:${compensation}`), ['insert_order:failed', 'insert_line_1:none']);
    const logged = service.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line['msg']?.toString().startsWith('compensation failed'));
    assert.is(logged?.['level'], 50);
    assert.is(logged?.['operation'], 'insert_order');
    assert.match(JSON.stringify(logged?.['rollback']), /delete/i);
    await raw.query(`delete from ${S}.orders where customer_id = 1`, []);
    assert.equal(await snapshot(raw), before);
  });

  test('an operation the database refuses for another reason is 500 operation_failed, listing the operation', async ({ service }) => {
    const reply = await action(service, 'write_view', {});
    assert.equal([reply.status, reply.body['code']], [500, 'operation_failed'], JSON.stringify(reply.body));
    assert.equal((reply.body['details'] as Record<string, unknown>)['operations'], [{ name: 'insert_into_view', status: 'failed', affectedRows: 0, compensation: 'none' }]);
  });

  test('waitUntilEffective: succeeds once a delayed write lands, and times out with 504 and compensation', async ({ service, raw }) => {
    const reference = 'job-delayed';
    const pending = action(service, 'await_job', { reference });
    await sleep(1200);
    await raw.query(`update ${S}.jobs set state = 'done' where reference = ?`, [reference]);
    const done = await pending;
    assert.is(done.status, 200, JSON.stringify(done.body));
    assert.equal((done.body['context'] as Record<string, unknown>)['job'], { reference, state: 'done' });

    const timedOut = await action(service, 'await_job', { reference: 'job-never' });
    assert.equal([timedOut.status, timedOut.body['code']], [504, 'wait_timeout'], JSON.stringify(timedOut.body));
    assert.equal((timedOut.body['details'] as Record<string, unknown>)['operations'], [{ name: 'submit_job', status: 'done', affectedRows: 1, compensation: 'compensated' }]);
    assert.equal(await rowsOf(raw, `select * from ${S}.jobs where reference = ?`, ['job-never']), []);
  });

  test('usingFilterFields reads request fields; dataType json stores a whole object', async ({ service }) => {
    const payload = { steps: [1, 2], owner: { name: "O'Brien" } };
    const reply = await action(service, 'submit_job', { reference: 'job-fields', payload });
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    const job = (reply.body['context'] as Record<string, { state: string; payload: unknown }>)['job'];
    assert.is(job?.state, 'submitted');
    assert.equal(job?.payload, payload);
  });

  test('hostile inputs come back as plain data, bound in SQL and in action values; the tables keep their shape', async ({ service, raw }) => {
    const before = await snapshot(raw);
    const asRead = (text: string | null) => (backend.readsWithoutLeadingBom && text?.startsWith('\uFEFF') ? text.slice(1) : text);
    for (const { name, value } of HOSTILE_STRINGS) {
      const echoed = await query(service, 'echo', { value });
      if (backend.family === 'postgres' && typeof value === 'string' && value.includes('\u0000')) {
        assert.equal([echoed.status, echoed.body['code']], [400, 'invalid_body'], name);
        continue;
      }
      assert.is(echoed.status, 200, `${name}: ${JSON.stringify(echoed.body).slice(0, 300)}`);
      assert.equal(echoed.body['rows'], [{ echoed: asRead(value as string) }], name);
    }
    for (const [index, { name, value }] of [...HOSTILE_STRINGS, ...HOSTILE_VALUES].entries()) {
      if (backend.family === 'postgres' && JSON.stringify(value).includes('\\u0000')) continue;
      const label = `hostile-${index}`;
      const text = typeof value === 'string' ? value : null;
      const stored = await action(service, 'record_echo', { label, text, json: value });
      assert.is(stored.status, 200, `${name}: ${JSON.stringify(stored.body).slice(0, 300)}`);
      const read = await query(service, 'echo_rows', { label });
      const [row] = read.body['rows'] as { text_value: string | null; json_value: unknown }[];
      assert.is(row?.text_value, asRead(text), name);
      assert.equal(row?.json_value, JSON.parse(JSON.stringify(value)), name);
    }
    assert.equal(await snapshot(raw), before);
  });

  test.run();
}
