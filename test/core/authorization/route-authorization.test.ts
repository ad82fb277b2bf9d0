import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const OUTSIDER_TOKEN = 'test-outsider-token';

/** The demo's data roles on every SQL route: retail 1 has `clerk` (admin token) and `analyst`; retail 2 has none. */
const routes = suite<{ service: TestService }>('data roles on the routes: restricted callers refused, allowed callers served');

routes.before(async (context) => {
  const config = demoConfig();
  const auth = config['auth'] as { tokens: unknown[] };
  auth.tokens.push({ token: OUTSIDER_TOKEN, subject: 'visitor', roles: ['visitor'] });
  context.service = await startTestService({ config });
});
routes.after(async ({ service }) => service?.close());

const post = async (service: TestService, path: string, body: unknown, token: string) => {
  const response = await service.request(path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token });
  return { status: response.status, body: (await response.json()) as { code?: string; details?: { resource?: string }; rows?: unknown[]; operations?: unknown[] } };
};

routes('the VDB list names the caller\'s access to each VDB', async ({ service }) => {
  const list = async (token: string) => ((await (await service.request('/api/v1/vdbs', { token })).json()) as { vdbs: { name: string; version: string; access: string }[] }).vdbs
    .map((vdb) => `${vdb.name}@${vdb.version}:${vdb.access}`).sort();
  // retail-crm has retail 1's data roles over both of its datasources
  assert.equal(await list(ANALYST_TOKEN), ['retail-crm@1:restricted', 'retail@1:restricted', 'retail@2:complete']);
  // the admin's clerk role selects every column of every relation of retail 1: complete, through data roles
  assert.equal(await list(ADMIN_TOKEN), ['retail-crm@1:complete', 'retail@1:complete', 'retail@2:complete']);
  assert.equal(await list(OUTSIDER_TOKEN), ['retail-crm@1:unavailable', 'retail@1:unavailable', 'retail@2:complete']);
});

routes('the VDB list tells a caller without a data role only that the VDB exists: its name, version and access', async ({ service }) => {
  const { vdbs } = (await (await service.request('/api/v1/vdbs', { token: OUTSIDER_TOKEN })).json()) as { vdbs: Record<string, unknown>[] };
  const byId = new Map(vdbs.map((vdb) => [`${String(vdb['name'])}@${String(vdb['version'])}`, vdb]));
  assert.equal(byId.get('retail@1'), { name: 'retail', version: '1', access: 'unavailable' });
  assert.equal(byId.get('retail-crm@1'), { name: 'retail-crm', version: '1', access: 'unavailable' });
  // retail 2 has no data roles: every caller may use it, and sees what it is
  assert.equal({ ...byId.get('retail@2'), catalogRevision: typeof byId.get('retail@2')?.['catalogRevision'] }, {
    name: 'retail', version: '2', description: 'Demo retail store, with per-customer order totals', catalogRevision: 'string', access: 'complete',
  });
});

routes('the catalog shows a restricted caller only what it may select', async ({ service }) => {
  type Catalog = { access: string; relations: { name: string; columns: { name: string }[]; uniqueKeys: string[][] }[] };
  const catalog = async (token: string) => (await (await service.request('/api/v1/vdbs/retail/versions/1/catalog', { token })).json()) as Catalog;
  const analyst = await catalog(ANALYST_TOKEN);
  assert.is(analyst.access, 'restricted');
  const customers = analyst.relations.find((relation) => relation.name === 'customers');
  assert.equal(customers?.columns.map((column) => column.name), ['id', 'name', 'region', 'created_at']);
  assert.equal(customers?.uniqueKeys, [], 'the unique key on email is hidden with the column');
  const clerk = await catalog(ADMIN_TOKEN);
  assert.ok(clerk.relations.find((relation) => relation.name === 'customers')?.columns.some((column) => column.name === 'email'));
  const outsider = await service.request('/api/v1/vdbs/retail/versions/1/catalog', { token: OUTSIDER_TOKEN });
  assert.equal([outsider.status, ((await outsider.json()) as { code: string }).code], [403, 'forbidden']);
});

routes('query endpoints: served within the grants, 403 naming the relation outside them', async ({ service }) => {
  const served = await post(service, '/api/v1/query/perform/customer_orders', { customerId: 7, limit: 1 }, ANALYST_TOKEN);
  assert.is(served.status, 200, JSON.stringify(served.body));
  assert.is(served.body.rows?.length, 1);
  const outsider = await post(service, '/api/v1/query/perform/customer_orders', { customerId: 7 }, OUTSIDER_TOKEN);
  assert.equal([outsider.status, outsider.body.code], [403, 'forbidden']);
});

routes('action endpoints: every statement is authorized before anything runs', async ({ service }) => {
  const analyst = await post(service, '/api/v1/actions/run/cancel_order', { orderId: 1, dryRun: true }, ANALYST_TOKEN);
  assert.equal([analyst.status, analyst.body.code, analyst.body.details?.resource], [403, 'forbidden', 'sales.orders']);
  const orderAsAnalyst = await post(service, '/api/v1/actions/run/place_order', { customerId: 1, lines: [{ productId: 1, quantity: 1, unitPrice: '1.20' }] }, ANALYST_TOKEN);
  assert.equal([orderAsAnalyst.status, orderAsAnalyst.body.details?.resource], [403, 'sales.orders']);
  const orders = await post(service, '/api/v1/query/perform/customer_orders', { customerId: 7, limit: 50 }, ADMIN_TOKEN);
  const open = (orders.body.rows as { id: number; status: string }[]).find((order) => order.status === 'paid' || order.status === 'pending');
  const clerk = await post(service, '/api/v1/actions/run/cancel_order', { orderId: open?.id, dryRun: true }, ADMIN_TOKEN);
  assert.equal([clerk.status, clerk.body.operations], [200, [{ name: 'cancel', status: 'skipped', affectedRows: 0 }]]);
});

routes.run();
