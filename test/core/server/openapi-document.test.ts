import { Writable } from 'node:stream';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { prepareService } from '../../../core/service.js';
import { HttpListeners } from '../../../core/server/http-server.js';
import type { OpenApiDocument } from '../../../core/server/openapi/openapi-document.js';
import { openApiDocument } from '../../../core/server/openapi/openapi-document.js';
import { routeModules } from '../../../core/server/routes/route-modules.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { ADMIN_TOKEN, ANALYST_TOKEN, demoConfig, startTestService, writeBundle, type TestService } from '../../support/test-service.js';

type Operation = OpenApiDocument['paths'][string]['post'] & object;

const discovery = suite<{ service: TestService; document: OpenApiDocument }>('discovery: GET /, GET /api/v1/openapi.json (demo bundle)');

discovery.before(async (context) => {
  context.service = await startTestService();
  const response = await context.service.request('/api/v1/openapi.json', { token: null });
  assert.is(response.status, 200);
  context.document = await response.json() as OpenApiDocument;
});
discovery.after(async ({ service }) => service?.close());

discovery('GET / points at the docs, the document, health and metrics, without credentials', async ({ service }) => {
  const response = await service.request('/', { token: null });
  assert.is(response.status, 200);
  const index = await response.json() as { name: string; links: Record<string, string> };
  assert.equal(index.links, { docs: '/docs', openapi: '/api/v1/openapi.json', health: '/observe/health', metrics: '/observe/metrics' });
  for (const link of Object.values(index.links)) assert.is((await service.request(link, { token: null })).status, 200, link);
});

discovery('the document is valid OpenAPI 3.1 (the official schema) and every $ref resolves', async ({ document }) => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
  assert.ok(result.valid, JSON.stringify(result.errors, null, 1));
  assert.is(validator.version, '3.1');
  const refs = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1] as string);
  assert.ok(refs.length > 0);
  for (const ref of new Set(refs)) {
    assert.ok(ref.startsWith('#/'), `${ref} points outside the document`);
    const target = ref.slice(2).split('/').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], document);
    assert.ok(target !== undefined, `${ref} does not resolve`);
  }
});

/** Every Schema Object of the document: the components' and each `schema` of a parameter or media type. */
function schemasOf(node: unknown, found: object[] = []): object[] {
  if (node === null || typeof node !== 'object') return found;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'schema' && value !== null && typeof value === 'object') found.push(value);
    else schemasOf(value, found);
  }
  return found;
}

discovery('every schema of the document is a valid JSON Schema of draft 2020-12, the 3.1 dialect', ({ document }) => {
  const ajv = new Ajv2020({ strict: false });
  const schemas = [...Object.values(document.components.schemas), ...schemasOf(document.paths)];
  assert.ok(schemas.length > 50);
  for (const schema of schemas) assert.ok(ajv.validateSchema(schema), `${JSON.stringify(schema).slice(0, 120)}: ${ajv.errorsText()}`);
});

discovery('each query and action is an operation of its own, its needed fields required, JSON and YAML bodies', ({ document }) => {
  const query = document.paths['/api/v1/query/perform/customer_orders']?.post as Operation;
  assert.is(query.operationId, 'query_customer_orders');
  assert.equal(query.tags, ['queries']);
  assert.match(query.description ?? '', /VDB retail version 1/);
  const body = query.requestBody?.content ?? {};
  assert.equal(Object.keys(body), ['application/json', 'application/yaml']);
  assert.equal(body['application/json']?.schema['required'], ['customerId']);
  assert.equal(Object.keys(query.responses), ['200', '400', '401', '403', '413', '415', '422', '500', '503', '504']);
  const missing = query.responses['400']?.content?.['application/json'];
  assert.equal(missing?.schema, { $ref: '#/components/schemas/Error' });
  assert.equal(missing?.examples?.['missing_fields']?.value, { code: 'missing_fields', message: 'the body lacks needed fields', details: {} });

  const action = document.paths['/api/v1/actions/run/place_order']?.post as Operation;
  assert.equal(action.requestBody?.content['application/yaml']?.schema['required'], ['customerId', 'lines']);
  assert.ok(action.responses['409']?.description.includes('`assertion_failed`'));
  assert.ok(action.responses['504']?.description.includes('`wait_timeout`'));
  const queries = Object.keys(document.paths).filter((path) => path.startsWith('/api/v1/query/perform/'));
  assert.equal(queries, ['/api/v1/query/perform/customer_orders', '/api/v1/query/perform/product_search', '/api/v1/query/perform/region_revenue', '/api/v1/query/perform/table_counts']);
});

discovery('the task routes answer the task envelope, with the configured capabilities', ({ document }) => {
  const task = document.paths['/api/v1/capabilities/{capability}/vdbs/{vdb}/versions/{version}/tasks']?.post as Operation;
  assert.equal(task.parameters?.find((parameter) => parameter.name === 'capability')?.schema, { enum: ['answer'] });
  assert.equal(task.responses['200']?.content?.['application/json']?.schema, { $ref: '#/components/schemas/TaskSnapshot' });
  const unauthenticated = task.responses['401']?.content?.['application/json'];
  assert.equal(unauthenticated?.schema, { $ref: '#/components/schemas/TaskError' });
  assert.equal(Object.keys(unauthenticated?.examples ?? {}), ['unauthenticated'], 'a refused credential is unauthenticated in the task envelope');
  // before routing, the startup gate answers the standard envelope
  assert.equal(task.responses['503']?.content?.['application/json']?.schema, { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/TaskError' }] });
  const versionless = document.paths['/api/v1/capabilities/{capability}/vdbs/{vdb}/tasks']?.post as Operation;
  assert.ok(versionless.responses['409']?.description.includes('`ambiguous_vdb_version`'));
  const taskError = document.components.schemas['TaskError'] as { properties: { code: { enum: string[] } } };
  assert.ok(taskError.properties.code.enum.includes('runtime_unavailable'));
  assert.not.ok(taskError.properties.code.enum.includes('missing_fields'));
});

discovery('bearer security by default; discovery and health need none; no token appears', ({ document }) => {
  assert.equal(document.security, [{ bearer: [] }]);
  assert.equal(document.components.securitySchemes['bearer']?.['scheme'], 'bearer');
  for (const path of ['/', '/api/v1/openapi.json', '/docs', '/observe/health', '/observe/metrics']) {
    assert.equal(document.paths[path]?.get?.security, [], path);
  }
  assert.is(document.paths['/api/v1/vdbs']?.get?.security, undefined);
  const text = JSON.stringify(document);
  for (const secret of [ADMIN_TOKEN, ANALYST_TOKEN, 'local-dev-runtime-token']) assert.not.ok(text.includes(secret), 'the document names no token');
});

discovery('operation ids are unique', ({ document }) => {
  const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
  assert.is(new Set(ids).size, ids.length);
});

discovery.run();

const drift = suite('the document and the routes restify serves agree');

/** `/api/v1/vdbs/:vdb/catalog` as a pattern a described path must match (`{vdb}` or a concrete name). */
function servedPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:(\w+)/g, '(\\{$1\\}|[^/{}]+)')}$`);
}

drift('every registered route is described, and every described operation is served', async () => {
  const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
  const configFile = writeBundle(demoConfig());
  const prepared = await prepareService({ configFile, env: {}, logDestination: quiet, datasources: { retail_db: await sharedPglite() } });
  try {
    const listeners = HttpListeners.build(prepared.config.server, routeModules, prepared.container, prepared.logger);
    const routes = Object.values(listeners.main.router.getRoutes() as unknown as Record<string, { method: string; path: string }>)
      .map((route) => ({ method: route.method.toLowerCase(), pattern: servedPattern(String(route.path)), path: String(route.path) }));
    const document = openApiDocument(routeModules, prepared.container);
    const described = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method, path })));
    const undescribed = routes.filter((route) => !described.some((operation) => operation.method === route.method && route.pattern.test(operation.path)));
    assert.equal(undescribed.map((route) => `${route.method} ${route.path}`), []);
    const unserved = described.filter((operation) => !routes.some((route) => route.method === operation.method && route.pattern.test(operation.path)));
    assert.equal(unserved.map((operation) => `${operation.method} ${operation.path}`), []);
  } finally {
    await prepared.close();
  }
});

drift.run();
