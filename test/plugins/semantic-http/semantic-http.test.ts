import 'reflect-metadata';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { container as rootContainer } from 'tsyringe';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpListeners } from '../../../core/server/http-server.js';
import { healthRoutes } from '../../../core/server/routes/health-routes.js';
import { sha256Hex } from '../../../core/semantic/digests.js';
import type { SemanticHealth, SemanticVdbDetail, SemanticVdbSummary } from '../../../core/semantic/semantic-types.js';
import { ANALYST_TOKEN, demoConfig, demoDescriptors, startTestService, type TestService } from '../../support/test-service.js';
import { serveFolder } from '../../support/fixture-server.js';
import { moduleBundleFiles, seededRetail, sha256Of, shopDocument, writeTempBundle, type ModuleSpec } from '../../support/semantic-test-support.js';

interface HealthBody {
  status: 'UP' | 'DOWN';
  semantic: SemanticHealth;
  datasources: { total: number; up: number; down: number };
}

/** Starts the service on a bundle of its own: `descriptors/` holds the given files. */
async function startWith(files: Record<string, string>, config: Record<string, unknown> = {}): Promise<TestService> {
  const bundle = Object.fromEntries(Object.entries(files).map(([path, text]) => [`descriptors/${path}`, text]));
  return startTestService({
    config: demoConfig({ descriptors: './descriptors', ...config }),
    files: bundle,
    datasources: { retail_db: await seededRetail() },
  });
}

async function health(service: TestService): Promise<{ status: number; body: HealthBody }> {
  const response = await service.request('/observe/health', { token: null });
  return { status: response.status, body: await response.json() as HealthBody };
}

function counts(overrides: Partial<SemanticHealth>): Omit<SemanticHealth, 'semanticAvailability'> {
  return {
    vdbCount: 1, activeCount: 0, catalogOnlyCount: 0, invalidCount: 0, compileFailedCount: 0,
    isolatedFailureCount: 0, startupBlockingFailureCount: 0, generation: 1, ...overrides,
  };
}

/** Health's datasource counts where the one datasource answers. */
const ONE_UP = { total: 1, up: 1, down: 0 };

const brokenModule: ModuleSpec = { documents: { 'shop.osi.yaml': shopDocument().replace('expression: total }', 'expression: amount }') } };

// ---------------------------------------------------------------------------------------------------
const demo = suite<{ service: TestService }>('semantic admin API and health on the demo bundle');

demo.before(async (context) => {
  context.service = await startTestService({ datasources: { retail_db: await seededRetail() } });
});
demo.after(async ({ service }) => {
  await service.close();
});

demo('health is UP and degraded: retail 1 active, retail 2 failed under policy isolate, retail-crm without a model; counts only, no names', async ({ service }) => {
  const { status, body } = await health(service);
  assert.is(status, 200);
  assert.equal(body, {
    status: 'UP',
    semantic: { semanticAvailability: 'degraded', ...counts({ vdbCount: 3, activeCount: 1, catalogOnlyCount: 1, invalidCount: 1, isolatedFailureCount: 1 }) },
    // retail_db and the demo's second datasource, crm_db
    datasources: { total: 2, up: 2, down: 0 },
  });
  const head = await service.request('/observe/health', { method: 'HEAD', token: null });
  assert.is(head.status, 200);
});

demo('the admin list has a summary per VDB name and version', async ({ service }) => {
  const response = await service.request('/api/v1/admin/semantic/vdbs');
  assert.is(response.status, 200);
  assert.is(response.headers.get('cache-control'), 'no-store');
  const { vdbs: all } = await response.json() as { vdbs: SemanticVdbSummary[] };
  // retail-crm (no model: catalogOnly) is listed too
  assert.equal(all.filter((vdb) => vdb.name === 'retail-crm').map((vdb) => vdb.state), ['catalogOnly']);
  const vdbs = all.filter((vdb) => vdb.name === 'retail');
  assert.equal(vdbs.map((vdb) => Object.keys(vdb).sort()), Array(2).fill([
    'activationFailurePolicy', 'diagnosticCount', 'errorCount', 'generation', 'name', 'packageAvailable', 'packageDigest', 'state', 'version', 'warningCount',
  ]));
  const [first, second] = vdbs;
  assert.equal({ ...first, packageDigest: undefined }, {
    name: 'retail', version: '1', generation: 1, state: 'active', activationFailurePolicy: 'isolate', packageAvailable: true,
    packageDigest: undefined, diagnosticCount: 0, errorCount: 0, warningCount: 0,
  });
  assert.match(first?.packageDigest ?? '', /^sha256:[0-9a-f]{64}$/);
  assert.equal(second, {
    name: 'retail', version: '2', generation: 1, state: 'invalid', activationFailurePolicy: 'isolate', packageAvailable: false,
    packageDigest: null, diagnosticCount: 1, errorCount: 1, warningCount: 0,
  });
});

demo('the detail of retail 2 starts with the binding error: file, line, column, catalog target, OSI code, remediation', async ({ service }) => {
  const response = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/2');
  assert.is(response.status, 200);
  const detail = await response.json() as SemanticVdbDetail;
  assert.is(detail.state, 'invalid');
  assert.is(detail.compilationFailure, null);
  const [first] = detail.diagnostics;
  assert.equal({ code: first?.code, osiCode: first?.osiCode, severity: first?.severity, document: first?.document, target: first?.target }, {
    code: 'bind.column_not_found', osiCode: 'E_NAME_NOT_FOUND', severity: 'error', document: 'semantic/retail-v2/customers.osi.yaml',
    target: 'column:sales.customer_order_totals.lifetime_revenue',
  });
  const line = readFileSync(join(demoDescriptors, 'semantic', 'retail-v2', 'customers.osi.yaml'), 'utf8').split('\n')[(first?.location.line ?? 0) - 1] ?? '';
  assert.is(line.slice((first?.location.column ?? 0) - 1, (first?.location.column ?? 0) - 1 + 'lifetime_revenue'.length), 'lifetime_revenue');
  assert.ok((first?.remediation ?? '').length > 0);
});

demo('the package of retail 1: canonical JSON, its digest as ETag, 304 on If-None-Match', async ({ service }) => {
  const response = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1/package');
  assert.is(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const text = await response.text();
  const digest = `sha256:${sha256Hex(text)}`;
  assert.is(response.headers.get('etag'), `"${digest}"`);
  const body = JSON.parse(text) as { format: string; formatVersion: number; vdb: { name: string; version: string }; metrics: { name: string }[] };
  assert.equal([body.format, body.formatVersion, body.vdb.name, body.vdb.version], ['semantic-package', 1, 'retail', '1']);
  assert.ok(body.metrics.some((metric) => metric.name === 'average_order_value'));
  const summary = await (await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1')).json() as SemanticVdbSummary;
  assert.is(summary.packageDigest, digest);
  const again = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1/package', { headers: { 'if-none-match': `"${digest}"` } });
  assert.is(again.status, 304);
});

demo('the package of retail 2 answers 409 with the VDB detail as its body (the spec\'s "409: the VDB detail"), code and message beside it', async ({ service }) => {
  const response = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/2/package');
  assert.is(response.status, 409);
  const body = await response.json() as SemanticVdbDetail & { code: string; message: string };
  assert.is(body.code, 'semantic_package_unavailable');
  assert.match(body.message, /^VDB retail version 2 has no semantic package: its state is invalid: semantic\/retail-v2\/customers\.osi\.yaml:\d+: bind\.column_not_found$/);
  assert.equal([body.name, body.version, body.state, body.packageAvailable, body.packageDigest], ['retail', '2', 'invalid', false, null]);
  assert.is(body.diagnostics[0]?.code, 'bind.column_not_found');
  const detail = await (await service.request('/api/v1/admin/semantic/vdbs/retail/versions/2')).json() as SemanticVdbDetail;
  const { code: _code, message: _message, details: _details, ...rest } = body as SemanticVdbDetail & { code: string; message: string; details: unknown };
  assert.equal(rest, detail);
});

demo('a name and version that is not active answers 404 vdb_not_found on detail and package', async ({ service }) => {
  for (const path of ['/api/v1/admin/semantic/vdbs/retail/versions/9', '/api/v1/admin/semantic/vdbs/retail/versions/9/package', '/api/v1/admin/semantic/vdbs/shop/versions/1']) {
    const response = await service.request(path);
    assert.is(response.status, 404, path);
    assert.is((await response.json() as { code: string }).code, 'vdb_not_found');
  }
});

demo('the admin API answers 401 without a caller and 403 without an admin role', async ({ service }) => {
  for (const path of ['/api/v1/admin/semantic/vdbs', '/api/v1/admin/semantic/vdbs/retail/versions/1', '/api/v1/admin/semantic/vdbs/retail/versions/1/package']) {
    const anonymous = await service.request(path, { token: null });
    assert.is(anonymous.status, 401, path);
    assert.is((await anonymous.json() as { code: string }).code, 'credentials_missing');
    const analyst = await service.request(path, { token: ANALYST_TOKEN });
    assert.is(analyst.status, 403, path);
    assert.is((await analyst.json() as { code: string }).code, 'forbidden');
  }
});

demo('a failure under policy isolate leaves the other routes serving', async ({ service }) => {
  const response = await service.request('/api/v1/vdbs/retail/versions/2/catalog');
  assert.is(response.status, 200);
});

demo.run();

// ---------------------------------------------------------------------------------------------------
const availability = suite('semantic availability in the health report, one bundle per value');

availability('notConfigured: no VDB references a model', async () => {
  const service = await startWith({ 'vdbs/plain.yaml': 'name: plain\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n' });
  try {
    assert.equal(await health(service), { status: 200, body: { status: 'UP', semantic: { semanticAvailability: 'notConfigured', ...counts({ catalogOnlyCount: 1 }) }, datasources: ONE_UP } });
  } finally {
    await service.close();
  }
});

availability('catalogOnly: the VDB references a model but does not enable it', async () => {
  const service = await startWith(moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() }, semanticLines: ['enabled: false'] }));
  try {
    assert.equal(await health(service), { status: 200, body: { status: 'UP', semantic: { semanticAvailability: 'catalogOnly', ...counts({ catalogOnlyCount: 1 }) }, datasources: ONE_UP } });
  } finally {
    await service.close();
  }
});

availability('available: the package is active and nothing failed', async () => {
  const service = await startWith(moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } }));
  try {
    assert.equal(await health(service), { status: 200, body: { status: 'UP', semantic: { semanticAvailability: 'available', ...counts({ activeCount: 1 }) }, datasources: ONE_UP } });
  } finally {
    await service.close();
  }
});

availability('degraded: a compile failure isolated by policy (compileFailed is counted)', async () => {
  const files = moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument().replace('SUM(orders.total)', 'orders.total') } });
  const service = await startWith(files);
  try {
    assert.equal(await health(service), { status: 200, body: { status: 'UP', semantic: { semanticAvailability: 'degraded', ...counts({ compileFailedCount: 1, isolatedFailureCount: 1 }) }, datasources: ONE_UP } });
    const detail = await (await service.request('/api/v1/admin/semantic/vdbs/shop/versions/1')).json() as SemanticVdbDetail;
    assert.equal(detail.compilationFailure?.code, 'compile.metric_not_aggregate');
  } finally {
    await service.close();
  }
});

availability('unavailable: a failure under blockStartup; health is DOWN, the admin API answers, every other route is 503 startup_blocked', async () => {
  // a query of the VDB too: its route is served from the first hook, before the gate's restify handler
  const query = 'type: sqlDirect\nvirtualDatabase: shop\nvirtualDatabaseVersion: "1"\nquery: select id from sales.orders\n';
  const service = await startWith({ ...moduleBundleFiles({ ...brokenModule, semanticLines: ['activationFailurePolicy: blockStartup'] }), 'queries/shop_orders.yaml': query });
  try {
    assert.equal(await health(service), { status: 503, body: { status: 'DOWN', semantic: { semanticAvailability: 'unavailable', ...counts({ invalidCount: 1, startupBlockingFailureCount: 1 }) }, datasources: ONE_UP } });
    const perform = await service.request('/api/v1/query/perform/shop_orders', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.is(perform.status, 503);
    assert.is((await perform.json() as { code: string }).code, 'startup_blocked');
    assert.is((await service.request('/observe/health', { method: 'HEAD', token: null })).status, 503);
    const list = await service.request('/api/v1/admin/semantic/vdbs');
    assert.is(list.status, 200);
    assert.is((await list.json() as { vdbs: SemanticVdbSummary[] }).vdbs[0]?.activationFailurePolicy, 'blockStartup');
    assert.is((await service.request('/api/v1/admin/semantic/vdbs/shop/versions/1/package')).status, 409);
    for (const path of ['/api/v1/vdbs', '/api/v1/vdbs/shop/versions/1/catalog', '/api/v1/no-such-route']) {
      for (const token of [undefined, null]) {
        const response = await service.request(path, token === null ? { token } : {});
        assert.is(response.status, 503, path);
        const body = await response.json() as { code: string; message: string; details: unknown };
        assert.equal([body.code, body.details], ['startup_blocked', {}]);
        assert.not.match(body.message, /shop/);
      }
    }
  } finally {
    await service.close();
  }
});

availability('the service default blockStartup applies to a VDB without its own policy; a VDB override isolate wins', async () => {
  const blocked = await startWith(moduleBundleFiles(brokenModule), { semantic: { activationFailurePolicy: 'blockStartup' } });
  try {
    assert.is((await health(blocked)).body.semantic.semanticAvailability, 'unavailable');
  } finally {
    await blocked.close();
  }
  const isolated = await startWith(moduleBundleFiles({ ...brokenModule, semanticLines: ['activationFailurePolicy: isolate'] }), { semantic: { activationFailurePolicy: 'blockStartup' } });
  try {
    const { status, body } = await health(isolated);
    assert.equal([status, body.semantic.semanticAvailability, body.semantic.isolatedFailureCount], [200, 'degraded', 1]);
    assert.is((await isolated.request('/api/v1/vdbs')).status, 200);
  } finally {
    await isolated.close();
  }
});

availability('initializing: before semantic activation has registered, health is DOWN', async () => {
  const logger = pino({ level: 'silent' });
  const config = { host: '127.0.0.1', port: 0, maxBodyBytes: 1024, requestTimeoutMs: 5000, keepAliveTimeoutMs: 65_000, maxResultBytes: 16_777_216 };
  const listeners = HttpListeners.build(config, [healthRoutes], rootContainer.createChildContainer(), logger);
  await listeners.listen(config);
  try {
    const response = await fetch(`${listeners.url}/observe/health`);
    assert.is(response.status, 503);
    assert.equal(await response.json(), { status: 'DOWN', semantic: { semanticAvailability: 'initializing', ...counts({ vdbCount: 0, generation: 0 }) }, datasources: { total: 0, up: 0, down: 0 } });
  } finally {
    await listeners.close(100);
  }
});

availability.run();

// ---------------------------------------------------------------------------------------------------
const lifecycle = suite('semantic inputs over the life of the process');

lifecycle('the package digest is the same after a restart', async () => {
  const digests: string[] = [];
  for (let start = 0; start < 2; start++) {
    const service = await startTestService({ datasources: { retail_db: await seededRetail() } });
    try {
      const summary = await (await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1')).json() as SemanticVdbSummary;
      digests.push(summary.packageDigest ?? '');
    } finally {
      await service.close();
    }
  }
  assert.match(digests[0] ?? '', /^sha256:/);
  assert.is(digests[1], digests[0]);
});

lifecycle('inputs are read once: a module changed on disk takes effect only after a restart', async () => {
  const service = await startWith(moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } }));
  try {
    const before = await (await service.request('/api/v1/admin/semantic/vdbs/shop/versions/1/package')).text();
    const document = join(service.config.descriptors, 'semantic', 'shop', 'shop.osi.yaml');
    writeFileSync(document, 'broken: [');
    const after = await service.request('/api/v1/admin/semantic/vdbs/shop/versions/1/package');
    assert.is(after.status, 200);
    assert.is(await after.text(), before);
  } finally {
    await service.close();
  }
});

lifecycle('with an admin listener, the admin API is served there and not on the main listener', async () => {
  const files = moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } });
  const service = await startWith(files, { server: { host: '127.0.0.1', port: 0, admin: { host: '127.0.0.1', port: 0 } } });
  try {
    assert.is((await service.request('/api/v1/admin/semantic/vdbs')).status, 404);
    const admin = await fetch(`${service.adminUrl}/api/v1/admin/semantic/vdbs`, { headers: { authorization: 'Bearer test-admin-token' } });
    assert.is(admin.status, 200);
    assert.is((await fetch(`${service.adminUrl}/observe/health`)).status, 200);
  } finally {
    await service.close();
  }
});

lifecycle('the http provider plugin fetches a module from a server (here a local one) at startup', async () => {
  const module = moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } });
  const server = await serveFolder(writeTempBundle(module));
  try {
    const vdb = 'name: shop\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\nsemantic:\n'
      + `  provider: { id: http, uri: "${server.url}/semantic/shop/", version: 1.0.0, sha256: ${sha256Of(module['semantic/shop/manifest.yaml'] as string)} }\n`;
    const service = await startWith({ 'vdbs/shop.yaml': vdb });
    try {
      assert.is((await health(service)).body.semantic.semanticAvailability, 'available');
      assert.equal(server.requests, ['/semantic/shop/manifest.yaml', '/semantic/shop/shop.osi.yaml']);
    } finally {
      await service.close();
    }
  } finally {
    await server.close();
  }
});

lifecycle('the demo module folder is what the demo VDB pins (copying it keeps it valid)', async () => {
  const files = { 'semantic/retail/manifest.yaml': '', 'semantic/retail/sales.osi.yaml': '', 'vdbs/retail-1.yaml': '' };
  for (const path of Object.keys(files)) (files as Record<string, string>)[path] = readFileSync(join(demoDescriptors, path), 'utf8');
  const service = await startWith(files);
  try {
    assert.is((await health(service)).body.semantic.semanticAvailability, 'available');
  } finally {
    await service.close();
  }
});

lifecycle.run();
