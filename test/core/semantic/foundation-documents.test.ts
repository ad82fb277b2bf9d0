import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PackageDataset, SemanticPackage } from '../../../core/plugin-api/semantic-package.js';
import { OSI_AGGREGATES, scanExpression } from '../../../core/semantic/osi-expression-subset.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { activationContext, moduleBundleFiles, shopDocument, vdbFromFile, writeTempBundle, type ModuleSpec } from '../../support/semantic-test-support.js';

const foundation = suite('OSI Foundation model documents');

async function activate(spec: ModuleSpec) {
  const dir = writeTempBundle(moduleBundleFiles(spec));
  return activateVdb(vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml')), activationContext(dir));
}

/** A model as the Foundation writes it: plain-string expressions, datatypes, access modifiers, a bridge. */
const FOUNDATION_DOCUMENT = `version: 0.2.0.dev0
namespace: shop
binding: { schema: sales }
semantic_model:
  - name: shop
    description: Orders by product
    datasets:
      - name: customers
        source: customers
        primary_key: [id]
        unique_keys: [[email]]
        fields:
          - { name: id, expression: id, datatype: Integer }
          - { name: email, expression: email, access_modifier: private }
          - { name: region, expression: UPPER(region), datatype: String, description: Region code }
          - { name: signed_up, expression: created_at, datatype: DateTimeTz }
      - name: orders
        source: orders
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: customer_id, expression: customer_id }
          - { name: status, expression: status }
          - name: total
            expression: { dialects: [{ dialect: SNOWFLAKE, expression: "total::number" }, { dialect: OSI_SQL_2026, expression: "COALESCE(total, 0)" }, { dialect: ANSI_SQL, expression: total }] }
      - name: order_lines
        source: order_lines
        role: bridge
        primary_key: [order_id, line_no]
        fields:
          - { name: order_id, expression: order_id }
          - { name: product_id, expression: product_id }
          - { name: quantity, expression: quantity }
      - name: products
        source: products
        primary_key: [id]
        fields:
          - { name: id, expression: id }
          - { name: category, expression: category }
      - name: same_region
        source: customer_order_totals
        fields:
          - { name: region, expression: region }
    relationships:
      - { name: orders_to_customers, from: orders, to: customers, from_columns: [customer_id], to_columns: [id], description: Who ordered }
      - { name: lines_to_orders, from: order_lines, to: orders, from_columns: [order_id], to_columns: [id] }
      - { name: lines_to_products, from: order_lines, to: products, from_columns: [product_id], to_columns: [id] }
      - { name: customers_by_region, from: customers, to: same_region, from_columns: [region], to_columns: [region] }
    metrics:
      - { name: revenue, expression: SUM(orders.total), datatype: Decimal }
      - { name: order_count, expression: "COUNT(DISTINCT orders.id)", access_modifier: private }
      - { name: average_order, expression: "revenue / NULLIF(order_count, 0)" }
      - name: paid_revenue
        expression: "SUM(CASE WHEN orders.status IN ('paid', 'shipped') THEN orders.total ELSE 0 END)"
`;

function dataset(pkg: SemanticPackage | undefined, id: string): PackageDataset {
  const found = pkg?.datasets.find((entry) => entry.id === id);
  if (!found) throw new Error(`no dataset ${id}`);
  return found;
}

foundation('a model written as the Foundation writes it activates, and the package carries what a query compiler needs', async () => {
  const activation = await activate({ documents: { 'shop.osi.yaml': FOUNDATION_DOCUMENT } });
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const pkg = activation.package?.document;
  // The non-key to_columns of customers_by_region are the one expected warning.
  assert.equal(activation.diagnostics.map((diagnostic) => diagnostic.code), ['bind.relationship_target_not_key']);

  assert.is(dataset(pkg, 'shop.order_lines').role, 'bridge');
  assert.is(dataset(pkg, 'shop.orders').role, null);
  assert.equal(dataset(pkg, 'shop.customers').uniqueKeys, [['email']]);

  const customers = dataset(pkg, 'shop.customers').fields;
  assert.equal(customers.map((field) => [field.name, field.accessModifier]), [['id', 'public'], ['email', 'private'], ['region', 'public'], ['signed_up', 'public']]);
  const region = customers.find((field) => field.name === 'region');
  assert.equal({ sql: region?.sql, logicalType: region?.logicalType }, { sql: 'UPPER("customers"."region")', logicalType: 'string' }, 'a computed field takes its logical type from datatype');
  assert.is(customers.find((field) => field.name === 'signed_up')?.isTime, true, 'a DateTimeTz field is a time dimension unless it says otherwise');
  assert.is(customers.find((field) => field.name === 'id')?.isTime, false);

  const total = dataset(pkg, 'shop.orders').fields.find((field) => field.name === 'total');
  assert.equal({ expression: total?.expression, sql: total?.sql }, { expression: 'COALESCE(total, 0)', sql: 'COALESCE("orders"."total", 0)' }, 'the OSI_SQL_2026 variant is preferred to ANSI_SQL');

  assert.equal(pkg?.metrics.map((metric) => [metric.name, metric.accessModifier]),
    [['average_order', 'public'], ['order_count', 'private'], ['paid_revenue', 'public'], ['revenue', 'public']]);
  assert.equal(pkg?.relationships.map((relationship) => [relationship.name, relationship.cardinality]), [
    ['customers_by_region', 'manyToMany'], ['lines_to_orders', 'manyToOne'], ['lines_to_products', 'manyToOne'], ['orders_to_customers', 'manyToOne'],
  ]);
});

foundation('a plain string is in the model\'s dialect: ANSI_SQL there is not held to the OSI subset', async () => {
  const ansi = FOUNDATION_DOCUMENT.replace('    description: Orders by product\n', '    description: Orders by product\n    dialect: ANSI_SQL\n')
    .replace('expression: UPPER(region)', 'expression: "SUBSTR(region, 1, 2)"');
  const activation = await activate({ documents: { 'shop.osi.yaml': ansi } });
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const osi = await activate({ documents: { 'shop.osi.yaml': ansi.replace('    dialect: ANSI_SQL\n', '') } });
  assert.is(osi.state, 'compileFailed');
  assert.is(osi.diagnostics.find((diagnostic) => diagnostic.severity === 'error')?.code, 'compile.expression_outside_subset');
});

foundation('a metric that aggregates an aggregate directly is refused with E_NESTED_AGGREGATION_DEFERRED', async () => {
  const activation = await activate({ documents: { 'shop.osi.yaml': `${shopDocument()}      - name: odd\n        expression: AVG(COUNT(orders.id))\n` } });
  assert.is(activation.state, 'compileFailed', JSON.stringify(activation.diagnostics));
  assert.equal([activation.diagnostics[0]?.code, activation.diagnostics[0]?.osiCode, activation.diagnostics[0]?.target],
    ['compile.nested_aggregate', 'E_NESTED_AGGREGATION_DEFERRED', 'metric:shop.odd']);
});

foundation('a dataset-level metrics block is a deferred key, not a typo', async () => {
  const document = shopDocument().replace('        source: orders\n', '        source: orders\n        metrics: [{ name: n, expression: COUNT(id) }]\n');
  const activation = await activate({ documents: { 'shop.osi.yaml': document } });
  assert.equal([activation.state, activation.diagnostics[0]?.code, activation.diagnostics[0]?.osiCode], ['invalid', 'document.deferred_key', 'E_DEFERRED_KEY_REJECTED']);
});

foundation('the OSI subset: functions, operators and constructs it has pass; others are named', () => {
  const check = (text: string) => scanExpression(text, (name) => OSI_AGGREGATES.has(name), true).outsideSubset;
  for (const inside of [
    "CASE WHEN a.b BETWEEN 1 AND 2 THEN 'x' ELSE 'y' END", 'COUNT(*)', 'COUNT(DISTINCT orders.id)', "DATE_TRUNC('month', o.d)",
    'EXTRACT(YEAR FROM o.d)', 'PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY o.v)', 'a IS NOT DISTINCT FROM b', "x NOT IN (1, 2) OR y ILIKE 'a%'",
    'CAST(x AS DECIMAL) / NULLIF(y, 0) % 3', "first || ' ' || last", '"Quoted Name" <> 1.5e3', 'IFF(x > 0, 1, 0)',
  ]) assert.is(check(inside), undefined, inside);
  assert.is(check('total::int'), 'the operator ::');
  assert.is(check('(SELECT 1)'), 'a subquery');
  assert.is(check('pg_catalog.now()'), 'the qualified function call pg_catalog.now');
  assert.is(check('x ~ y'), 'the operator ~');
  assert.is(check('md5(x)'), 'the function MD5, which is not in the OSI expression language');
  assert.is(check("x + INTERVAL '1 day'"), 'an INTERVAL literal (use DATEADD)');
  assert.is(check("'open"), 'an unterminated string literal');
});

foundation('aggregate nesting is found through parentheses, not across sibling calls', () => {
  const scan = (text: string) => scanExpression(text, (name) => OSI_AGGREGATES.has(name), false);
  assert.is(scan('SUM(a) / COUNT(b)').nested, undefined);
  assert.is(scan('SUM(CASE WHEN x THEN (a) END) + MAX(b)').nested, undefined);
  assert.is(scan('AVG((COUNT(b)))').nested?.name, 'COUNT');
  assert.equal(scan('m + SUM(a)').aggregates.map((call) => [call.name, call.start, call.end]), [['SUM', 4, 10]]);
});

foundation('a window call is no aggregate (§6.10): SUM(SUM(a)) OVER (…) nests nothing; deferred frames are named (§6.10.6)', () => {
  const scan = (text: string) => scanExpression(text, (name) => OSI_AGGREGATES.has(name), true);
  const windowed = scan('SUM(SUM(a)) OVER (PARTITION BY b ORDER BY c ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)');
  assert.equal([windowed.windowed, windowed.nested, windowed.aggregates.map((call) => call.name), windowed.deferredFrame], [true, undefined, ['SUM'], undefined]);
  assert.is(scan('SUM(a) + MAX(b)').windowed, false);
  assert.is(scan('ROW_NUMBER() OVER (ORDER BY a)').outsideSubset, undefined);
  assert.is(scan('SUM(a) OVER (ORDER BY b GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW)').deferredFrame, 'a GROUPS frame');
  assert.is(scan('SUM(a) OVER (ORDER BY b ROWS BETWEEN n PRECEDING AND CURRENT ROW)').deferredFrame, 'a PRECEDING bound that is no literal whole number');
  assert.is(scan('SUM(a) OVER (ORDER BY b ROWS UNBOUNDED PRECEDING)').deferredFrame, undefined);
});

foundation.run();
