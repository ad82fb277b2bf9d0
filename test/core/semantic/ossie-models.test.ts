import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SemanticVdbDetail } from '../../../core/semantic/semantic-types.js';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { dropStatements, namespaceStatements, ossieBundleFiles, ossieFixtures, ossieSchema, schemaStatements, type GeneratedSchema, type OssieFixture } from '../../support/ossie-models.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

/**
 * The public models of Apache Ossie (test/fixtures/ossie), packaged unchanged, over a PGlite database
 * holding the relations and columns they bind to: each that validates against Ossie's schema for its
 * version activates.
 */
const test = suite<{ service: TestService; fixtures: OssieFixture[]; schema: GeneratedSchema; raw: Datasource }>('Apache Ossie\'s public models activate as published');

test.before(async (context) => {
  context.fixtures = ossieFixtures();
  const modelled = context.fixtures.filter((fixture) => fixture.document.semantic_model !== undefined);
  context.schema = await ossieSchema(modelled);
  // The shared PGlite keeps the retail demo in `sales`; the models' tables (and schemas other than public) are dropped after.
  context.raw = await sharedPglite();
  for (const statement of [...namespaceStatements(context.schema, 'postgres'), ...dropStatements(context.schema, 'postgres'), ...schemaStatements(context.schema, 'postgres')]) await context.raw.query(statement, []);
  const files = Object.fromEntries(Object.entries(ossieBundleFiles(modelled, 'ossie_db', context.schema)).map(([path, text]) => [`bundle/${path}`, text]));
  // The GSF model again, for an analyst who may not read orders.subtotal, the column its metric sums without a field.
  files['bundle/vdbs/gsf-restricted.yaml'] = `${(files['bundle/vdbs/gsf-sales-ossie.yaml'] as string).replace('name: gsf-sales-ossie', 'name: gsf-restricted')}dataRoles:
  - name: analyst
    grants:
      - { resource: public.orders, allow: [select], columns: [order_id, customer_id, order_date, discount] }
      - { resource: public.customers, allow: [select] }
`;
  const config = demoConfig({ descriptors: './bundle', datasources: { ossie_db: { adapter: 'pglite' } } });
  context.service = await startTestService({ config, files, datasources: { ossie_db: context.raw } });
});

test.after(async ({ service, schema, raw }) => {
  await service?.close();
  if (!raw) return;
  await dropSyncedRoles(service, raw);
  for (const statement of dropStatements(schema, 'postgres')) await raw.query(statement, []);
  for (const name of schema.schemas.filter((candidate) => candidate !== 'public')) await raw.query(`drop schema if exists "${name}" cascade`, []);
});

const detailOf = async (service: TestService, slug: string) =>
  await (await service.request(`/api/v1/admin/semantic/vdbs/${slug}/versions/1`)).json() as SemanticVdbDetail;

test('the examples and converter fixtures that fit Ossie\'s schema of their version are 10 (flights is an ontology; dbt writes a top-level dialects 0.2.0.dev0 removed)', ({ fixtures }) => {
  const valid = fixtures.filter((fixture) => fixture.schemaProblem === undefined && !fixture.name.includes('/src/test/')).map((fixture) => fixture.name);
  assert.equal(valid, [
    'examples/tpcds_semantic_model.yaml',
    'converters/databricks/tests/fixtures/fixtureA_ossie.yaml',
    'converters/databricks/tests/fixtures/fixtureB_ossie.yaml',
    'converters/databricks/tests/fixtures/tpcds_ossie.yaml',
    'converters/gooddata/tests/fixtures/osi_tpcds.yaml',
    'converters/gsf/tests/fixtures/sales.ossie.yaml',
    'converters/omni/tests/fixtures/fixtureA_osi.yaml',
    'converters/orionbelt/tests/fixtures/obml_as_osi.yaml',
    'converters/orionbelt/tests/fixtures/tpcds_osi.yaml',
    'converters/orionbelt/tests/fixtures/tpcds_semantic_model.yaml',
  ]);
  const flights = fixtures.find((fixture) => fixture.name === 'examples/flights.yaml');
  assert.match(flights?.schemaProblem ?? '', /semantic_model/);
  for (const dbt of fixtures.filter((fixture) => fixture.name.includes('dbt'))) assert.match(dbt.schemaProblem ?? '', /"additionalProperty":"dialects"/, dbt.name);
});

test('each model that fits Ossie\'s schema activates unchanged, without an error', async ({ service, fixtures }) => {
  for (const fixture of fixtures.filter((candidate) => candidate.schemaProblem === undefined && !candidate.name.includes('/src/test/'))) {
    const detail = await detailOf(service, fixture.slug);
    const errors = detail.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    assert.is(detail.state, 'active', `${fixture.name}: ${JSON.stringify(errors.map((diagnostic) => `${diagnostic.code}: ${diagnostic.message}`))}`);
  }
});

test('the dbt converter\'s documents (Ossie 0.1.1\'s top-level dialects under version 0.2.0.dev0) activate as well', async ({ service, fixtures }) => {
  const dbt = fixtures.filter((fixture) => fixture.name.includes('dbt'));
  assert.is(dbt.length, 4);
  for (const fixture of dbt) {
    const detail = await detailOf(service, fixture.slug);
    assert.is(detail.state, 'active', `${fixture.name}: ${JSON.stringify(detail.diagnostics.map((diagnostic) => diagnostic.message))}`);
  }
});

test('the Salesforce converter\'s input fits Ossie\'s schema but is refused, naming the construct: its expressions are T-SQL brackets labelled ANSI_SQL', async ({ service, fixtures }) => {
  const salesforce = fixtures.find((fixture) => fixture.name.includes('salesforce')) as OssieFixture;
  assert.is(salesforce.schemaProblem, undefined);
  const detail = await detailOf(service, salesforce.slug);
  assert.is(detail.state, 'compileFailed');
  const first = detail.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
  assert.is(first?.code, 'compile.expression_invalid');
  assert.match(first?.message ?? '', /\[/);
});

test('a column a metric reads without a field stays under the caller\'s grants: the analyst may not sum orders.subtotal', async ({ service }) => {
  const query = (measures: unknown[]) => service.request('/api/v1/semantic/vdbs/gsf-restricted/versions/1/query', {
    method: 'POST', token: ANALYST_TOKEN, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dimensions: ['customers.customer_name'], measures }),
  });
  const refused = await query(['revenue_per_customer']);
  const body = await refused.json() as { code: string; details: { resource: string } };
  assert.equal([refused.status, body.code, body.details.resource], [403, 'forbidden', 'public.orders.subtotal']);
  const allowed = await query([{ expression: 'COUNT(orders.order_id)', alias: 'orders' }]);
  assert.is(allowed.status, 200, await allowed.clone().text());
});

test('an ad-hoc measure may read a column no field names, under the caller\'s grants; one the caller may not read is refused as a name that does not exist', async ({ service }) => {
  const query = (measure: string) => service.request('/api/v1/semantic/vdbs/gsf-restricted/versions/1/query', {
    method: 'POST', token: ANALYST_TOKEN, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dimensions: ['customers.customer_name'], measures: [measure] }),
  });
  const granted = await query('SUM(orders.discount) AS discount');
  assert.is(granted.status, 200, await granted.clone().text());
  const hidden = await query('SUM(orders.subtotal) AS s');
  const absent = await query('SUM(orders.subtotax) AS s');
  const [hiddenBody, absentBody] = [await hidden.text(), await absent.text()];
  assert.equal([hidden.status, JSON.parse(hiddenBody).details.osiCode], [400, 'E_NAME_NOT_FOUND'], hiddenBody);
  // Nothing tells the hidden column from one that does not exist, and nothing names the relation.
  assert.is(hiddenBody.replaceAll('subtotal', 'subtotax'), absentBody);
  assert.not.match(hiddenBody, /public/);
  // Where every column is granted, it is read.
  const admin = await service.request('/api/v1/semantic/vdbs/gsf-sales-ossie/versions/1/query', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ dimensions: ['customers.customer_name'], measures: ['SUM(orders.subtotal) AS s'] }),
  });
  assert.is(admin.status, 200, await admin.clone().text());
});

test.run();
