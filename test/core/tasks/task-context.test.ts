import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { effectiveGrants } from '../../../core/authorization/grants.js';
import { taskContext } from '../../../core/tasks/task-context.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { ANALYST_TOKEN, startTestService, type TestService } from '../../support/test-service.js';

/** The Task API's authorized context comes from the same grants as every SQL path (docs/authorization.md). */
const context = suite<{ service: TestService }>('the authorized context of a task, derived from the data roles');
context.before(async (state) => {
  state.service = await startTestService();
});
context.after(async ({ service }) => service?.close());

function contextFor(service: TestService, roles: string[]) {
  const vdb = service.container.resolve(coreTokens.vdbs).get('retail', '1');
  const semanticPackage = service.container.resolve(coreTokens.semantic).packageOf('retail', '1');
  return taskContext({ vdb, sqlFamily: 'postgres', semanticPackage }, effectiveGrants(vdb, { subject: 'someone', roles, scheme: 'bearer' }));
}

context('a restricted caller sees neither the column nor the semantic fields over it; the metrics it can compute stay', ({ service }) => {
  const analyst = contextFor(service, ['analyst']);
  assert.is(analyst.access, 'restricted');
  assert.match(analyst.semanticRevision ?? '', /^sha256:[0-9a-f]{64}$/);
  const customers = analyst.relations.find((relation) => relation.name === 'customers');
  assert.not.ok(customers?.columns.some((column) => column.name === 'email'));
  const dataset = analyst.semantic?.datasets.find((candidate) => candidate.name === 'customers');
  assert.ok(dataset, 'the customers dataset stays, without email');
  assert.not.ok(dataset?.fields.some((field) => field.columns.includes('email')));
  assert.ok(analyst.semantic?.metrics.some((metric) => metric.name === 'revenue'));
  const clerk = contextFor(service, ['clerk']);
  assert.ok(clerk.semantic?.datasets.find((candidate) => candidate.name === 'customers')?.fields.some((field) => field.columns.includes('email')));
});

context('each relation names the datasource it lives in: retail-crm\'s sales in retail_db, its crm in crm_db (a query over both is federated)', ({ service }) => {
  const vdb = service.container.resolve(coreTokens.vdbs).get('retail-crm', '1');
  const analyst = taskContext({ vdb, sqlFamily: 'postgres', semanticPackage: undefined }, effectiveGrants(vdb, { subject: 'someone', roles: ['analyst'], scheme: 'bearer' }));
  assert.equal(analyst.relations.map((relation) => `${relation.schema}.${relation.name}@${relation.datasource}`).sort(), [
    'crm.regions@crm_db', 'crm.segments@crm_db',
    'sales.customers@retail_db', 'sales.order_lines@retail_db', 'sales.orders@retail_db', 'sales.products@retail_db',
  ]);
});

context('a dataset\'s keys name no hidden column: a unique key over email is dropped for the analyst, kept for the clerk', ({ service }) => {
  const analyst = contextFor(service, ['analyst']);
  const hidden = new Map(analyst.relations.map((relation) => [`${relation.schema}.${relation.name}`, new Set(relation.columns.map((column) => column.name))]));
  const customers = analyst.semantic?.datasets.find((dataset) => dataset.name === 'customers');
  assert.ok(customers);
  assert.not.ok(JSON.stringify(customers).includes('"email"'), 'email is named nowhere in the dataset');
  for (const dataset of analyst.semantic?.datasets ?? []) {
    const visible = hidden.get(`${dataset.relation.schema}.${dataset.relation.name}`) ?? new Set<string>();
    for (const key of [dataset.primaryKey, ...dataset.uniqueKeys]) {
      assert.ok(key.every((column) => visible.has(column)), `${dataset.id}: key ${key.join(', ')} names only visible columns`);
    }
  }
  for (const relationship of analyst.semantic?.relationships ?? []) {
    assert.not.ok([...relationship.fromColumns, ...relationship.toColumns].includes('email'));
  }
  const clerk = contextFor(service, ['clerk']);
  assert.ok(clerk.semantic?.datasets.find((dataset) => dataset.name === 'customers')?.uniqueKeys.some((key) => key.includes('email')), 'the clerk, who sees email, keeps the key');
});

context('private fields and metrics (access_modifier) are left out; a public metric over a private field stays', ({ service }) => {
  // A copy: contexts are kept per VDB and grants, and this one has another package than the service's.
  const vdb = { ...service.container.resolve(coreTokens.vdbs).get('retail', '1') };
  const active = service.container.resolve(coreTokens.semantic).packageOf('retail', '1');
  assert.ok(active);
  const document = {
    ...active.document,
    datasets: active.document.datasets.map((dataset) => ({
      ...dataset, fields: dataset.fields.map((field) => (field.id === 'retail.orders.total' ? { ...field, accessModifier: 'private' as const } : field)),
    })),
    metrics: active.document.metrics.map((metric) => (metric.name === 'order_count' ? { ...metric, accessModifier: 'private' as const } : metric)),
  };
  const clerk = taskContext({ vdb, sqlFamily: 'postgres', semanticPackage: { document, digest: active.digest } }, effectiveGrants(vdb, { subject: 'someone', roles: ['clerk'], scheme: 'bearer' }));
  const orders = clerk.semantic?.datasets.find((dataset) => dataset.id === 'retail.orders');
  assert.ok(orders?.fields.some((field) => field.name === 'status'));
  assert.not.ok(orders?.fields.some((field) => field.name === 'total'), 'the private field is hidden');
  const metrics = clerk.semantic?.metrics.map((metric) => metric.name) ?? [];
  assert.ok(metrics.includes('revenue'), 'revenue reads the private total and stays');
  assert.not.ok(metrics.includes('order_count'), 'the private metric is hidden');
});

context('an enriched field is visible only to a caller who sees the other dataset\'s columns it reads and joins', ({ service }) => {
  const vdb = { ...service.container.resolve(coreTokens.vdbs).get('retail', '1') };
  const active = service.container.resolve(coreTokens.semantic).packageOf('retail', '1');
  assert.ok(active);
  const relationship = active.document.relationships.find((candidate) => candidate.from === 'retail.orders' && candidate.to === 'retail.customers');
  assert.ok(relationship);
  const enriched = {
    id: 'retail.orders.customer_email', name: 'customer_email', expression: 'customers.email', sql: '"customers"."email"', column: null, columns: [],
    logicalType: 'string' as const, nativeType: null, nullable: null, isTime: false, label: null, description: null, aiContext: null, accessModifier: 'public' as const,
    joins: [{ relationship: relationship.id, dataset: 'retail.customers', on: '', fanOut: false }], reads: [{ dataset: 'retail.customers', columns: ['email'] }],
  };
  const document = {
    ...active.document,
    datasets: active.document.datasets.map((dataset) => (dataset.id === 'retail.orders' ? { ...dataset, fields: [...dataset.fields, enriched] } : dataset)),
  };
  const fieldsOf = (roles: string[]) => taskContext({ vdb: { ...vdb }, sqlFamily: 'postgres', semanticPackage: { document, digest: active.digest } }, effectiveGrants(vdb, { subject: 'someone', roles, scheme: 'bearer' }))
    .semantic?.datasets.find((dataset) => dataset.id === 'retail.orders')?.fields.map((field) => field.name) ?? [];
  assert.ok(fieldsOf(['clerk']).includes('customer_email'));
  const analyst = fieldsOf(['analyst']);
  assert.ok(analyst.includes('status'));
  assert.not.ok(analyst.includes('customer_email'), 'the analyst may not read customers.email');
});

context('a caller without a data role gets access unavailable and nothing to plan with', ({ service }) => {
  const outsider = contextFor(service, ['visitor']);
  assert.equal([outsider.access, outsider.relations, outsider.semantic?.datasets, outsider.semantic?.metrics], ['unavailable', [], [], []]);
});

context('the context holds no credential and no identity', ({ service }) => {
  const text = JSON.stringify(contextFor(service, ['analyst']));
  for (const forbidden of [ANALYST_TOKEN, 'someone', '"subject"', '"roles"', 'analyst']) assert.not.ok(text.includes(forbidden), forbidden);
});

context.run();
