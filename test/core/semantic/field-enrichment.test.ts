import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PackageField, SemanticPackage } from '../../../core/plugin-api/semantic-package.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { activationContext, moduleBundleFiles, vdbFromFile, writeTempBundle } from '../../support/semantic-test-support.js';

const enrichment = suite('semantic activation: field enrichment (OSI Foundation §4.3.1)');

const DOCUMENT = `version: 0.2.0.dev0
binding: { schema: sales }
semantic_model:
  - name: shop
    datasets:
      - name: customers
        source: customers
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: region, expression: region }
      - name: orders
        source: orders
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: total, expression: total }
          - { name: region, expression: customers.region }
          - { name: region_or_none, expression: "COALESCE(region, 'none')" }
          - { name: customer_email, expression: customers.email }
          - { name: doubled, expression: total * 2 }
          - { name: doubled_plus, expression: doubled + 1 }
      - name: order_lines
        source: order_lines
        fields:
          - { name: quantity, expression: quantity }
          - { name: customer_region, expression: orders.region }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id] }
      - { name: lines_to_orders, from: order_lines, to: orders, from_columns: [order_id], to_columns: [id] }
    metrics:
      - name: east_quantity
        expression: "SUM(CASE WHEN order_lines.customer_region = 'EAST' THEN order_lines.quantity END)"
`;

async function activate(): Promise<SemanticPackage> {
  const dir = writeTempBundle(moduleBundleFiles({ documents: { 'shop.osi.yaml': DOCUMENT } }));
  const activation = await activateVdb(vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml')), activationContext(dir));
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics.map((diagnostic) => diagnostic.message)));
  return activation.package?.document as SemanticPackage;
}

function field(pkg: SemanticPackage, id: string): PackageField {
  const found = pkg.datasets.flatMap((dataset) => dataset.fields).find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no field ${id}`);
  return found;
}

const toCustomers = { relationship: 'shop.orders_to_customers', dataset: 'shop.customers', on: '"orders"."customer_id" = "customers"."id"', fanOut: false };

enrichment('a field reading a field of a dataset on its one side compiles, with the join and the columns it reads there', async () => {
  const pkg = await activate();
  const region = field(pkg, 'shop.orders.region');
  assert.equal(
    { sql: region.sql, column: region.column, columns: region.columns, logicalType: region.logicalType, joins: region.joins, reads: region.reads },
    { sql: '"customers"."region"', column: null, columns: [], logicalType: 'string', joins: [toCustomers], reads: [{ dataset: 'shop.customers', columns: ['region'] }] },
  );
  // A column of the other dataset that no field names is read as well.
  assert.equal([field(pkg, 'shop.orders.customer_email').sql, field(pkg, 'shop.orders.customer_email').joins], ['"customers"."email"', [toCustomers]]);
});

enrichment('a field of a field of its own dataset is inlined; over an enriched field it brings the enrichment along', async () => {
  const pkg = await activate();
  const doubledPlus = field(pkg, 'shop.orders.doubled_plus');
  assert.equal([doubledPlus.sql, doubledPlus.columns, doubledPlus.joins], ['((("orders"."total" * 2)) + 1)', ['total'], undefined]);
  const regionOrNone = field(pkg, 'shop.orders.region_or_none');
  assert.equal([regionOrNone.sql, regionOrNone.joins], ['COALESCE(("customers"."region"), \'none\')', [toCustomers]]);
});

enrichment('a chain of enrichments joins every dataset along it, parents first; a metric over it joins them too', async () => {
  const pkg = await activate();
  const customerRegion = field(pkg, 'shop.order_lines.customer_region');
  assert.equal([customerRegion.sql, customerRegion.joins?.map((join) => join.dataset), customerRegion.reads], [
    '("customers"."region")', ['shop.orders', 'shop.customers'], [{ dataset: 'shop.customers', columns: ['region'] }],
  ]);
  const metric = pkg.metrics.find((candidate) => candidate.id === 'shop.east_quantity');
  assert.equal([metric?.baseDataset, metric?.datasets, metric?.joins.map((join) => join.dataset)], [
    'shop.order_lines', ['shop.order_lines', 'shop.orders', 'shop.customers'], ['shop.orders', 'shop.customers'],
  ]);
});

enrichment('a field without enrichment has no joins or reads members: packages of such models keep their bytes', async () => {
  const pkg = await activate();
  const total = field(pkg, 'shop.orders.total') as unknown as Record<string, unknown>;
  assert.ok(!('joins' in total) && !('reads' in total));
});

enrichment.run();
