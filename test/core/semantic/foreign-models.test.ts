import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { activationContext, moduleBundleFiles, vdbFromFile, writeTempBundle, type ModuleSpec } from '../../support/semantic-test-support.js';

/**
 * Models as other tools write them, against the retail catalog (schema `sales` of datasource retail_db):
 * how sources name relations, which dialect variants compile, metrics over columns, and COUNT(*).
 */
const test = suite('semantic models as other tools write them');

async function activate(document: string, spec: Partial<ModuleSpec> = {}) {
  const dir = writeTempBundle(moduleBundleFiles({ documents: { 'model.yaml': document }, ...spec }));
  return activateVdb(vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml')), activationContext(dir));
}

/** A model of orders to customers; `source` is the orders dataset's source, `metric` the expression of `m`. */
function model(options: { ordersSource?: string; customersSource?: string; metric?: string; dialect?: string; version?: string; customersFirst?: boolean } = {}): string {
  const expression = (text: string) => `{ dialects: [{ dialect: ${options.dialect ?? 'ANSI_SQL'}, expression: '${text}' }] }`;
  const orders = [
    '      - name: orders',
    `        source: '${options.ordersSource ?? 'sales.orders'}'`,
    '        primary_key: [id]',
    '        fields:',
    `          - { name: status, expression: ${expression('status')} }`,
  ];
  const customers = [
    '      - name: customers',
    `        source: '${options.customersSource ?? 'sales.customers'}'`,
    '        primary_key: [id]',
    '        fields:',
    `          - { name: region, expression: ${expression('region')} }`,
  ];
  return [
    ...(options.version ? [`version: "${options.version}"`] : []),
    'semantic_model:',
    '  - name: shop',
    '    datasets:',
    ...(options.customersFirst ? [...customers, ...orders] : [...orders, ...customers]),
    '    relationships:',
    '      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }',
    '    metrics:',
    `      - { name: m, expression: ${expression(options.metric ?? 'SUM(orders.total)')} }`,
  ].join('\n') + '\n';
}

const errorsOf = (activation: Awaited<ReturnType<typeof activate>>) => activation.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');

test('a three-part source names a datasource by the VDB name, its id or an alias of the VDB file; unquoted parts fold case', async () => {
  for (const [source, lines] of [['SHOP.SALES.ORDERS', []], ['Retail_DB.sales.Orders', []], ['TPCDS.PUBLIC_ALIAS_FREE.ORDERS', ['databaseAliases: { tpcds: retail_db }']]] as const) {
    const activation = await activate(model({ ordersSource: source.replace('PUBLIC_ALIAS_FREE', 'SALES') }), { semanticLines: [...lines] });
    assert.is(activation.state, 'active', `${source}: ${JSON.stringify(errorsOf(activation))}`);
    const orders = activation.package?.document.datasets.find((dataset) => dataset.name === 'orders');
    assert.equal(orders?.relation, { datasource: 'retail_db', schema: 'sales', name: 'orders', kind: 'table' });
  }
  const unknown = await activate(model({ ordersSource: 'WAREHOUSE.SALES.ORDERS' }));
  assert.equal(errorsOf(unknown).map((diagnostic) => [diagnostic.code, diagnostic.target]), [['bind.database_not_found', 'database:WAREHOUSE']]);
  assert.match(errorsOf(unknown)[0]?.message ?? '', /databaseAliases/);
});

test('a quoted part compares exactly: "SALES".orders is no schema of the VDB', async () => {
  const activation = await activate(model({ ordersSource: '"SALES".orders' }));
  assert.equal(errorsOf(activation).map((diagnostic) => diagnostic.code), ['bind.schema_not_found']);
  assert.is((await activate(model({ ordersSource: '"sales"."orders"' }))).state, 'active');
});

test('a one-part source takes the VDB file\'s defaultSchema, else the manifest\'s, else the one schema that has it; a wrong default is named', async () => {
  assert.is((await activate(model({ ordersSource: 'ORDERS', customersSource: 'customers' }))).state, 'active');
  assert.is((await activate(model({ ordersSource: 'orders' }), { semanticLines: ['defaultSchema: sales'] })).state, 'active');
  const wrong = await activate(model({ ordersSource: 'orders' }), { semanticLines: ['defaultSchema: stock'] });
  assert.equal(errorsOf(wrong).map((diagnostic) => diagnostic.code), ['bind.schema_not_found']);
  assert.match(errorsOf(wrong)[0]?.message ?? '', /semantic\.defaultSchema of the VDB file/);
});

test('a vendor dialect\'s expression compiles when the OSI expression language reads it, and is refused naming the construct otherwise', async () => {
  const plain = await activate(model({ dialect: 'DATABRICKS', metric: 'SUM(orders.total * (1 - 0.1))' }));
  assert.is(plain.state, 'active', JSON.stringify(errorsOf(plain)));
  const cast = await activate(model({ dialect: 'SNOWFLAKE', metric: 'SUM(orders.total)::NUMBER' }));
  assert.equal(errorsOf(cast).map((diagnostic) => diagnostic.code), ['compile.expression_outside_subset']);
  assert.match(errorsOf(cast)[0]?.message ?? '', /SNOWFLAKE expressions in OSI_SQL_2026, which does not have the operator ::/);
  const mdx = await activate(model({ dialect: 'MDX', metric: '[Measures].[Total]' }));
  assert.ok(errorsOf(mdx).every((diagnostic) => diagnostic.code === 'compile.dialect_unavailable'));
});

test('a metric reads a column of a dataset\'s relation that no field names, and a bare column of the fact; the column is a private field of the package', async () => {
  const activation = await activate(model({ metric: 'SUM(orders.total) / NULLIF(COUNT(DISTINCT customer_id), 0)' }));
  assert.is(activation.state, 'active', JSON.stringify(errorsOf(activation)));
  const orders = activation.package?.document.datasets.find((dataset) => dataset.name === 'orders');
  assert.equal(orders?.fields.map((field) => [field.name, field.accessModifier, field.sql]), [
    ['status', 'public', '"orders"."status"'], ['total', 'private', '"orders"."total"'], ['customer_id', 'private', '"orders"."customer_id"'],
  ]);
  const metric = activation.package?.document.metrics[0];
  assert.equal([metric?.sql, metric?.baseDataset], ['SUM("orders"."total") / NULLIF(COUNT(DISTINCT "orders"."customer_id"), 0)', 'shop.orders']);
  // id is a column of both relations: the fact (orders, the `to` of no relationship) is meant.
  const id = await activate(model({ metric: 'COUNT(id)' }));
  assert.is(id.package?.document.metrics[0]?.sql, 'COUNT("orders"."id")');
  const unknown = await activate(model({ metric: 'SUM(orders.nothing)' }));
  assert.equal(errorsOf(unknown).map((diagnostic) => diagnostic.code), ['resolve.unknown_field']);
});

test('COUNT(*) has no dataset of its own (the query gives it its home); its base is the fact of its model, not the first dataset listed', async () => {
  const activation = await activate(model({ metric: 'COUNT(*)', customersFirst: true }));
  assert.is(activation.state, 'active', JSON.stringify(errorsOf(activation)));
  assert.equal([activation.package?.document.metrics[0]?.baseDataset, activation.package?.document.metrics[0]?.datasets], ['shop.orders', []]);
});

test('document versions 0.1.0, 0.1.1 and 0.2.0.dev0 are read without a word; another with the warning document.version_unknown', async () => {
  for (const version of ['0.1.0', '0.1.1', '0.2.0.dev0']) assert.equal((await activate(model({ version }))).diagnostics, [], version);
  const unknown = await activate(model({ version: '0.3.0' }));
  assert.is(unknown.state, 'active');
  assert.equal(unknown.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.severity]), [['document.version_unknown', 'warning']]);
});

test.run();
