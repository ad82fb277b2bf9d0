import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ANALYST_TOKEN, startTestService, type TestService } from '../../support/test-service.js';

const http = suite<{ service: TestService }>('service over HTTP (demo bundle, PGlite)');

http.before(async (context) => {
  context.service = await startTestService();
});
http.after(async ({ service }) => {
  await service.close();
});

http('health answers UP without credentials, on GET and HEAD', async ({ service }) => {
  const response = await service.request('/observe/health', { token: null });
  assert.is(response.status, 200);
  assert.is(response.headers.get('cache-control'), 'no-store');
  assert.is((await response.json() as { status: string }).status, 'UP');
  const head = await service.request('/observe/health', { method: 'HEAD', token: null });
  assert.is(head.status, 200);
});

http('readiness answers 200 READY without credentials while every datasource answers; health counts them; the up gauges read 1', async ({ service }) => {
  const ready = await service.request('/observe/ready', { token: null });
  assert.equal([ready.status, ready.headers.get('cache-control'), await ready.json()], [200, 'no-store', { status: 'READY', unavailable: [] }]);
  assert.is((await service.request('/observe/ready', { method: 'HEAD', token: null })).status, 200);
  const health = await (await service.request('/observe/health', { token: null })).json() as { datasources: unknown };
  assert.equal(health.datasources, { total: 2, up: 2, down: 0 });
  const metrics = await (await service.request('/observe/metrics', { token: null })).text();
  assert.match(metrics, /^vdb_datasource_up\{datasource="retail_db"\} 1$/m);
  assert.match(metrics, /^vdb_datasource_up\{datasource="crm_db"\} 1$/m);
});

http('a route without credentials answers 401 with a challenge and a machine code', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs', { token: null });
  assert.is(response.status, 401);
  assert.is(response.headers.get('www-authenticate'), 'Bearer realm="vdb-service"');
  const body = await response.json() as { code: string; message: string; details: unknown };
  assert.is(body.code, 'credentials_missing');
  assert.type(body.message, 'string');
  assert.equal(body.details, {});
});

http('an unknown token answers 401 invalid_token', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs', { token: 'not-a-real-token' });
  assert.is(response.status, 401);
  assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="vdb-service", error="invalid_token"/);
  assert.is((await response.json() as { code: string }).code, 'token_unknown');
  assert.not.ok(service.logs.some((line) => line.includes('not-a-real-token')), 'the presented token is never logged');
});

http('a non-bearer authorization header answers 401 credentials_malformed', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs', { token: null, headers: { authorization: 'Basic b3BzOnNlY3JldA==' } });
  assert.is(response.status, 401);
  assert.is((await response.json() as { code: string }).code, 'credentials_malformed');
});

http('lists both versions of the retail VDB for an authenticated caller', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs', { token: ANALYST_TOKEN });
  assert.is(response.status, 200);
  const body = await response.json() as { vdbs: { name: string; version: string; catalogRevision: string }[] };
  assert.equal(body.vdbs.map((vdb) => `${vdb.name}@${vdb.version}`).sort(), ['retail-crm@1', 'retail@1', 'retail@2']);
  assert.ok(body.vdbs.every((vdb) => /^sha256:[0-9a-f]{64}$/.test(vdb.catalogRevision)));
});

interface CatalogBody {
  relations: { schema: string; name: string; kind: string; primaryKey: string[]; columns: { name: string; logicalType: string; nullable: boolean }[]; foreignKeys: { referencedRelation: string }[] }[];
}

http('the catalog of retail 1 holds the four tables with keys and logical types', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs/retail/versions/1/catalog');
  assert.is(response.status, 200);
  const body = await response.json() as CatalogBody;
  assert.equal(body.relations.map((relation) => relation.name).sort(), ['customers', 'order_lines', 'orders', 'products']);
  const orders = body.relations.find((relation) => relation.name === 'orders');
  assert.equal(orders?.primaryKey, ['id']);
  assert.ok(orders?.foreignKeys.some((key) => key.referencedRelation === 'customers'));
  const price = body.relations.find((relation) => relation.name === 'products')?.columns.find((column) => column.name === 'unit_price');
  assert.is(price?.logicalType, 'decimal');
});

http('retail 2 adds the customer_order_totals view: name and version both matter', async ({ service }) => {
  const body = await (await service.request('/api/v1/vdbs/retail/versions/2/catalog')).json() as CatalogBody;
  const view = body.relations.find((relation) => relation.name === 'customer_order_totals');
  assert.is(view?.kind, 'view');
  assert.equal(view?.primaryKey, []);
});

http('an unknown VDB version answers 404 vdb_not_found', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs/retail/versions/9/catalog');
  assert.is(response.status, 404);
  assert.is((await response.json() as { code: string }).code, 'vdb_not_found');
});

http('an unknown route answers 404 as JSON with a code', async ({ service }) => {
  const response = await service.request('/api/v1/nothing-here');
  assert.is(response.status, 404);
  assert.equal(await response.json(), { code: 'not_found', message: 'no such route', details: {} });
});

http('a request id is generated, or kept when the caller sends a plain one', async ({ service }) => {
  const generated = await service.request('/observe/health');
  assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const kept = await service.request('/observe/health', { headers: { 'x-request-id': 'trace-42' } });
  assert.is(kept.headers.get('x-request-id'), 'trace-42');
  const refused = await service.request('/observe/health', { headers: { 'x-request-id': 'bad id\twith spaces' } });
  assert.match(refused.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

http('logs are JSON lines and never hold a token', async ({ service }) => {
  assert.ok(service.logs.length > 0);
  for (const line of service.logs) {
    const entry = JSON.parse(line) as Record<string, unknown>;
    assert.type(entry['level'], 'number');
    assert.not.match(line, /test-admin-token|test-analyst-token/);
  }
});

http.run();
