import { join } from 'node:path';
import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalJson, sha256Hex } from '../../../core/semantic/digests.js';
import { ProviderError, type SemanticProvider } from '../../../core/plugin-api/semantic-provider.js';
import type { PackageMetric, SemanticPackage } from '../../../core/plugin-api/semantic-package.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { demoDescriptors } from '../../support/test-service.js';
import {
  activationContext, moduleBundleFiles, postgresDialect, shopDocument, vdbFromFile, writeTempBundle, type ModuleSpec,
} from '../../support/semantic-test-support.js';

const pipeline = suite('semantic activation pipeline');

async function activate(spec: ModuleSpec, overrides: Parameters<typeof activationContext>[1] = {}) {
  const dir = writeTempBundle(moduleBundleFiles(spec));
  const vdb = vdbFromFile(join(dir, 'vdbs', `${spec.vdbName ?? 'shop'}-${spec.vdbVersion ?? '1'}.yaml`));
  return activateVdb(vdb, activationContext(dir, overrides));
}

function metric(pkg: SemanticPackage | undefined, id: string): PackageMetric {
  const found = pkg?.metrics.find((entry) => entry.id === id);
  if (!found) throw new Error(`no metric ${id}`);
  return found;
}

pipeline('a VDB without a semantic section is catalogOnly, with the service default policy', async () => {
  const dir = writeTempBundle({ 'vdbs/plain.yaml': 'name: plain\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n' });
  const activation = await activateVdb(vdbFromFile(join(dir, 'vdbs', 'plain.yaml')), activationContext(dir, { defaultPolicy: 'blockStartup' }));
  assert.equal({ ...activation, package: activation.package }, {
    name: 'plain', version: '1', generation: 1, state: 'catalogOnly', activationFailurePolicy: 'blockStartup',
    semanticConfigured: false, diagnostics: [], compilationFailure: null, package: null,
  });
});

pipeline('enabled: false keeps the VDB catalogOnly without reading the module', async () => {
  const activation = await activate({ documents: { 'shop.osi.yaml': 'not: [valid' }, semanticLines: ['enabled: false'] });
  assert.is(activation.state, 'catalogOnly');
  assert.ok(activation.semanticConfigured);
  assert.equal(activation.diagnostics, []);
});

pipeline('a VDB overrides the service policy', async () => {
  const activation = await activate({ documents: { 'shop.osi.yaml': shopDocument() }, semanticLines: ['activationFailurePolicy: blockStartup'] });
  assert.is(activation.activationFailurePolicy, 'blockStartup');
  assert.is(activation.state, 'active');
});

pipeline('the demo retail 1 model compiles: datasets, relationships, metrics with inlined metrics and join paths', async () => {
  const activation = await activateVdb(vdbFromFile(join(demoDescriptors, 'vdbs', 'retail-1.yaml')), activationContext(demoDescriptors));
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  assert.equal(activation.diagnostics, []);
  const compiled = activation.package;
  assert.ok(compiled);
  const pkg = compiled.document;
  assert.is(pkg.format, 'semantic-package');
  assert.is(pkg.formatVersion, 1);
  assert.equal(pkg.vdb.name, 'retail');
  assert.equal(pkg.module, { name: 'retail-semantic', version: '1.0.0', namespace: 'retail' });
  assert.equal(pkg.sources.map((source) => source.path), ['sales.osi.yaml']);
  assert.ok(pkg.sources.every((source) => /^sha256:[0-9a-f]{64}$/.test(source.contentDigest)));
  assert.equal(pkg.datasets.map((dataset) => dataset.id), ['retail.customers', 'retail.order_lines', 'retail.orders', 'retail.products']);
  const orders = pkg.datasets.find((dataset) => dataset.id === 'retail.orders');
  assert.equal(orders?.relation, { datasource: 'retail_db', schema: 'sales', name: 'orders', kind: 'table' });
  const total = orders?.fields.find((field) => field.name === 'total');
  assert.equal({ column: total?.column, logicalType: total?.logicalType, sql: total?.sql }, { column: 'total', logicalType: 'decimal', sql: '"orders"."total"' });
  assert.equal((total?.aiContext as { synonyms: string[] }).synonyms, ['amount', 'order value', 'order total']);
  const cancelled = orders?.fields.find((field) => field.name === 'is_cancelled');
  assert.equal({ column: cancelled?.column, columns: cancelled?.columns, sql: cancelled?.sql }, { column: null, columns: ['status'], sql: `"orders"."status" = 'cancelled'` });
  assert.equal(pkg.relationships.map((relationship) => `${relationship.from}->${relationship.to}:${relationship.cardinality}`),
    ['retail.order_lines->retail.orders:manyToOne', 'retail.order_lines->retail.products:manyToOne', 'retail.orders->retail.customers:manyToOne']);

  const average = metric(pkg, 'retail.average_order_value');
  assert.equal(average.metrics, ['retail.revenue', 'retail.order_count']);
  assert.is(average.sql, `(SUM(CASE WHEN NOT ("orders"."status" = 'cancelled') THEN "orders"."total" ELSE 0 END)) / NULLIF((COUNT(CASE WHEN NOT ("orders"."status" = 'cancelled') THEN "orders"."id" END)), 0)`);
  const perCustomer = metric(pkg, 'retail.revenue_per_customer');
  assert.is(perCustomer.baseDataset, 'retail.orders');
  assert.equal(perCustomer.joins, []);
  assert.equal((metric(pkg, 'retail.revenue').aiContext as { synonyms: string[] }).synonyms, ['sales', 'turnover', 'income', 'total sales']);

  assert.is(compiled.canonicalJson, canonicalJson(JSON.parse(compiled.canonicalJson)));
  assert.is(compiled.digest, `sha256:${sha256Hex(compiled.canonicalJson)}`);
});

pipeline('the demo retail 2 model fails binding, with the column and its file position', async () => {
  const activation = await activateVdb(vdbFromFile(join(demoDescriptors, 'vdbs', 'retail-2.yaml')), activationContext(demoDescriptors));
  assert.is(activation.state, 'invalid');
  assert.is(activation.package, null);
  const [first] = activation.diagnostics;
  assert.is(first?.code, 'bind.column_not_found');
  assert.is(first?.document, 'semantic/retail-v2/customers.osi.yaml');
  assert.is(first?.target, 'column:sales.customer_order_totals.lifetime_revenue');
  assert.match(first?.message ?? '', /it has customer_id, name, region, order_count, revenue/);
});

pipeline('the first error is the root cause: a binding error sorts before a compile error above it in the file', async () => {
  const document = shopDocument()
    .replace('{ dialect: ANSI_SQL, expression: region }', '{ dialect: ANSI_SQL, expression: "region ||" }')
    .replace('expression: total }', 'expression: amount }')
    .replace('primary_key: [id]', 'primary_key: [region]');
  const activation = await activate({ documents: { 'shop.osi.yaml': document } });
  assert.equal(activation.diagnostics.map((diagnostic) => diagnostic.code), ['bind.column_not_found', 'bind.key_not_enforced', 'compile.expression_invalid']);
  assert.ok(activation.diagnostics[2]!.location.line < activation.diagnostics[0]!.location.line, 'the compile error is earlier in the file');
  assert.is(activation.state, 'invalid');
  assert.is(activation.compilationFailure, null);
});

pipeline('a compile failure gives compileFailed, compilationFailure, and no package', async () => {
  const activation = await activate({ documents: { 'shop.osi.yaml': shopDocument().replace('SUM(orders.total)', 'orders.total') } });
  assert.is(activation.state, 'compileFailed');
  assert.is(activation.package, null);
  assert.equal(activation.compilationFailure, { code: 'compile.metric_not_aggregate', message: activation.diagnostics[0]!.message });
});

pipeline('the package digest depends on content only: key order, layout and comments do not count', async () => {
  const block = shopDocument();
  const reordered = [
    '# The same model, keys in another order and other layout.',
    'semantic_model:',
    '  - datasets:',
    '      - fields:',
    '          - { expression: { dialects: [{ expression: id, dialect: ANSI_SQL }] }, name: id }',
    '          - { expression: { dialects: [{ expression: region }] }, name: region }',
    '        primary_key: [id]',
    '        source: customers',
    '        name: customers',
    '      - name: orders',
    '        fields:',
    '          - { name: id, expression: { dialects: [{ dialect: ANSI_SQL, expression: id }] } }',
    '          - { name: customer_id, expression: { dialects: [{ dialect: ANSI_SQL, expression: customer_id }] } }',
    '          - { logical_type: decimal, name: total, expression: { dialects: [{ dialect: ANSI_SQL, expression: total }] } }',
    '        primary_key: [id]',
    '        source: orders',
    '    metrics:',
    '      - { expression: { dialects: [{ dialect: ANSI_SQL, expression: SUM(orders.total) }] }, name: revenue }',
    '    relationships:',
    '      - { to_columns: [id], from_columns: [customer_id], to: customers, from: orders, name: orders_to_customers }',
    '    name: shop',
    'binding: { schema: sales }',
    'namespace: shop',
  ].join('\n') + '\n';
  const first = await activate({ documents: { 'shop.osi.yaml': block } });
  const second = await activate({ documents: { 'shop.osi.yaml': reordered } });
  const again = await activate({ documents: { 'shop.osi.yaml': block } });
  assert.is(first.state, 'active');
  assert.is(second.state, 'active', JSON.stringify(second.diagnostics));
  assert.is(second.package?.digest, first.package?.digest);
  assert.is(again.package?.canonicalJson, first.package?.canonicalJson);
});

pipeline('a different model gives a different digest', async () => {
  const first = await activate({ documents: { 'shop.osi.yaml': shopDocument() } });
  const changed = await activate({ documents: { 'shop.osi.yaml': shopDocument().replace('name: revenue', 'name: sales') } });
  assert.is.not(changed.package?.digest, first.package?.digest);
});

pipeline('JSON documents activate, and their diagnostics still point at a line', async () => {
  const model = {
    namespace: 'shop',
    binding: { schema: 'sales' },
    semantic_model: [{ name: 'shop', datasets: [{ name: 'orders', source: 'orders', fields: [{ name: 'total', expression: { dialects: [{ expression: 'amount' }] } }] }] }],
  };
  const activation = await activate({ documents: { 'shop.osi.json': JSON.stringify(model, null, 2) }, mediaType: 'application/vnd.osi+json' });
  assert.is(activation.state, 'invalid');
  assert.equal({ code: activation.diagnostics[0]?.code, location: activation.diagnostics[0]?.location }, { code: 'bind.column_not_found', location: { line: 19, column: 35 } });
});

pipeline('namespaces: an import makes the other namespace\'s datasets visible, qualified or not', async () => {
  const finance = [
    'namespace: finance', 'binding: { schema: sales }', 'semantic_model:', '  - name: finance', '    datasets:',
    '      - name: invoices', '        source: orders', '        primary_key: [id]', '        fields:',
    '          - { name: id, expression: { dialects: [{ expression: id }] } }',
    '          - { name: customer_id, expression: { dialects: [{ expression: customer_id }] } }',
    '          - { name: amount, expression: { dialects: [{ expression: total }] } }',
  ].join('\n') + '\n';
  const shop = shopDocument()
    .replace('binding:', 'imports: [finance]\nbinding:')
    .replace('    metrics:\n', '      - { name: invoices_to_customers, from: finance.invoices, to: customers, from_columns: [customer_id], to_columns: [id] }\n    metrics:\n      - { name: invoiced, expression: { dialects: [{ expression: SUM(invoices.amount) / COUNT(DISTINCT customers.id) }] } }\n');
  const activation = await activate({ documents: { 'shop.osi.yaml': shop, 'finance.osi.yaml': finance } });
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const invoiced = metric(activation.package?.document, 'shop.invoiced');
  assert.equal(invoiced.datasets, ['finance.invoices', 'shop.customers']);
  assert.is(invoiced.sql, 'SUM("invoices"."total") / COUNT(DISTINCT "customers"."id")');
});

pipeline('a metric over datasets no many-to-one path connects joins across a fan-out step, and says so', async () => {
  const dir = writeTempBundle(moduleBundleFiles({
    documents: {
      'retail.osi.yaml': shopDocument()
        .replace('    relationships:\n', [
          '      - { name: products, source: products, primary_key: [id], fields: [{ name: id, expression: { dialects: [{ expression: id }] } }] }',
          '      - name: order_lines', '        source: order_lines', '        primary_key: [order_id, line_no]', '        fields:',
          '          - { name: order_id, expression: { dialects: [{ expression: order_id }] } }',
          '          - { name: product_id, expression: { dialects: [{ expression: product_id }] } }',
          '    relationships:',
          '      - { name: lines_to_orders, from: order_lines, to: orders, from_columns: [order_id], to_columns: [id] }',
          '      - { name: lines_to_products, from: order_lines, to: products, from_columns: [product_id], to_columns: [id] }',
          '',
        ].join('\n'))
        .replace('SUM(orders.total)', 'COUNT(DISTINCT products.id) + COUNT(DISTINCT customers.id)'),
    },
  }));
  const result = await activateVdb(vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml')), activationContext(dir));
  assert.is(result.state, 'active', JSON.stringify(result.diagnostics));
  const revenue = metric(result.package?.document, 'shop.revenue');
  assert.is(revenue.baseDataset, 'shop.products');
  assert.equal(revenue.joins.map((join) => `${join.dataset}:${join.fanOut}`), ['shop.order_lines:true', 'shop.orders:false', 'shop.customers:false']);
});

pipeline('expressions of a MySQL datasource are parsed with its grammar and quoted with backticks', async () => {
  const mysql = new MysqlDialect('mysql');
  const document = shopDocument().replace('expression: region }', 'expression: "CONCAT(region, \'-\', `id`)" }');
  const activation = await activate({ documents: { 'shop.osi.yaml': document } }, { dialectOf: () => mysql });
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const region = activation.package?.document.datasets.find((dataset) => dataset.name === 'customers')?.fields.find((field) => field.name === 'region');
  assert.is(region?.sql, "CONCAT(`customers`.`region`, '-', `customers`.`id`)");
  const broken = await activate({ documents: { 'shop.osi.yaml': shopDocument().replace('expression: total }', 'expression: "total +" }') } }, { dialectOf: () => mysql });
  assert.is(broken.state, 'compileFailed');
  assert.is(broken.diagnostics[0]?.code, 'compile.expression_invalid');
  assert.match(broken.diagnostics[0]?.message ?? '', /does not parse as MySQL/);
});

pipeline('a provider that fails unexpectedly gives activation.internal_error, never a crash', async () => {
  const throwing: SemanticProvider = { id: 'bundle', mediaTypes: ['application/vnd.vdb.semantic-module+yaml'], open: () => Promise.reject(new TypeError('boom')) };
  const activation = await activate({ documents: { 'shop.osi.yaml': shopDocument() } }, { provider: () => throwing });
  assert.is(activation.state, 'invalid');
  assert.equal(
    { code: activation.diagnostics[0]?.code, document: activation.diagnostics[0]?.document, target: activation.diagnostics[0]?.target },
    { code: 'activation.internal_error', document: 'vdbs/shop-1.yaml', target: 'module:shop-semantic@1.0.0' },
  );
  assert.match(activation.diagnostics[0]?.message ?? '', /boom/);
  const refusing: SemanticProvider = { ...throwing, open: () => Promise.reject(new ProviderError('provider.unreachable', 'down')) };
  assert.is((await activate({ documents: { 'shop.osi.yaml': shopDocument() } }, { provider: () => refusing })).diagnostics[0]?.code, 'provider.unreachable');
});

pipeline('the postgres dialect quotes what it must', () => {
  assert.is(postgresDialect.quoteIdentifier('a"b'), '"a""b"');
});

pipeline.run();
