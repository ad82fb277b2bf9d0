/**
 * The composition oracle: each semantic query's answer, through the real service, equals the SQL a careful
 * analyst writes by hand (each aggregate computed at its own table's grain, the groups of both sides kept),
 * run on the same database over the generated rows of composition-fixtures.ts.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { compositionBundle, NESTED_VDB, NOKEYS_VDB, PRELUDE_VDB, seedStatements, TABLES, VDB } from './composition-fixtures.js';
import { skippedHere } from '../../support/backends.js';

export interface CompositionBackend {
  name: string;
  skip?: string | undefined;
  /** The schema the tables live in (MySQL: the database). */
  schema: string;
  setup: string[];
  /** NULL-safe equality in the backend's SQL (the oracle's stitch). */
  nullSafe(left: string, right: string): string;
  datasourceConfig: Record<string, unknown>;
  open(): Promise<Datasource>;
  closeAfter: boolean;
}

type Row = Record<string, unknown>;

/** Numbers as the drivers give them (strings for decimals), to 6 decimals; NULL as null. */
function normal(rows: Row[], columns: string[]): unknown[][] {
  const value = (cell: unknown) => {
    if (cell === null || cell === undefined) return null;
    const number = typeof cell === 'number' ? cell : typeof cell === 'string' && /^-?\d+(\.\d+)?(e-?\d+)?$/i.test(cell) ? Number(cell) : undefined;
    return number === undefined ? cell : Math.round(number * 1e6) / 1e6;
  };
  const table = rows.map((row) => columns.map((column) => value(row[column])));
  return table.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

export function runCompositionSuite(backend: CompositionBackend): void {
  const test = suite<{ raw: Datasource; service: TestService }>(`${backend.name}: semantic composition equals hand-written SQL (OSI Foundation §4.5, §6.7)`);
  if (skippedHere(test, backend)) return;
  const t = (table: string) => `${backend.schema}.${table}`;
  const ns = backend.nullSafe;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of [...backend.setup, ...seedStatements(t)]) await context.raw.query(statement, []);
    const config = demoConfig({ descriptors: './bundle', datasources: { comp_db: backend.datasourceConfig } });
    context.service = await startTestService({ config, files: compositionBundle(backend.schema, 'comp_db'), datasources: { comp_db: context.raw } });
  });
  test.after(async ({ raw, service }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw);
    for (const table of TABLES) await raw.query(`drop table if exists ${t(table)}`, []);
    if (backend.closeAfter) await raw.close();
  });

  const ask = async (service: TestService, body: unknown, vdb = VDB) => {
    const response = await service.request(`/api/v1/semantic/vdbs/${vdb}/versions/1/query`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    return { status: response.status, body: (await response.json()) as Row };
  };
  const answer = async (service: TestService, body: unknown, columns: string[], vdb = VDB) => {
    const reply = await ask(service, body, vdb);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    return normal(reply.body['rows'] as Row[], columns);
  };
  /** The service's answer and the oracle's, row for row (the oracle's columns in the same order). */
  const same = async ({ raw, service }: { raw: Datasource; service: TestService }, body: unknown, columns: string[], oracle: string, vdb = VDB) => {
    const expected = normal((await raw.query(oracle, [])).rows, columns);
    const actual = await answer(service, body, columns, vdb);
    assert.ok(expected.length > 1, `the oracle has groups to compare: ${JSON.stringify(expected)}`);
    assert.equal(actual, expected, `service ${JSON.stringify(actual)}\n oracle ${JSON.stringify(expected)}`);
  };
  const refused = async (service: TestService, body: unknown, osiCode: string, vdb = VDB) => {
    const reply = await ask(service, body, vdb);
    assert.equal([reply.status, reply.body['code'], (reply.body['details'] as Row | undefined)?.['osiCode']], [400, 'semantic_query_invalid', osiCode], JSON.stringify(reply.body));
  };

  // The groups of a stitch: every key either side has.
  const salesByState = `SELECT st.state, SUM(ss.net_paid) AS paid, COUNT(ss.ticket) AS tickets FROM ${t('cp_store_sales')} ss LEFT JOIN ${t('cp_store')} st ON ss.store_sk = st.store_sk`;
  const storesByState = `SELECT st.state, SUM(st.number_employees) AS employees, COUNT(st.store_sk) AS stores FROM ${t('cp_store')} st`;

  test('TPC-DS store_productivity = SUM(store_sales.net_paid) / SUM(store.number_employees) by store.state: each store\'s employees once, the state without sales kept', async (context) => {
    await same(context, { dimensions: ['store.state'], measures: ['net_paid', 'employees', 'store_productivity'] }, ['state', 'net_paid', 'employees', 'store_productivity'], `
      SELECT k.state, s.paid AS net_paid, e.employees, s.paid / e.employees AS store_productivity
      FROM (SELECT state FROM (${salesByState} GROUP BY st.state) a UNION SELECT state FROM (${storesByState} GROUP BY st.state) b) k
      LEFT JOIN (${salesByState} GROUP BY st.state) s ON ${ns('s.state', 'k.state')}
      LEFT JOIN (${storesByState} GROUP BY st.state) e ON ${ns('e.state', 'k.state')}`);
  });

  test('a metric counting the one side from the many side (paid_per_store): stores counted once each, not once per sale line', async (context) => {
    await same(context, { dimensions: ['store.state'], measures: ['paid_per_store'] }, ['state', 'paid_per_store'], `
      SELECT k.state, s.paid / COALESCE(e.stores, 0) AS paid_per_store
      FROM (SELECT state FROM (${salesByState} GROUP BY st.state) a UNION SELECT state FROM (${storesByState} GROUP BY st.state) b) k
      LEFT JOIN (${salesByState} GROUP BY st.state) s ON ${ns('s.state', 'k.state')}
      LEFT JOIN (${storesByState} GROUP BY st.state) e ON ${ns('e.state', 'k.state')}`);
  });

  test('store_productivity without dimensions: one row, each sum over its own table', async ({ raw, service }) => {
    const oracle = `SELECT (SELECT SUM(net_paid) FROM ${t('cp_store_sales')}) / (SELECT SUM(number_employees) FROM ${t('cp_store')}) AS v`;
    const expected = normal((await raw.query(oracle, [])).rows, ['v']);
    assert.equal(await answer(service, { measures: ['store_productivity'] }, ['store_productivity']), expected);
  });

  test('store_productivity with a where on the store: the filter applies to each sum\'s rows', async (context) => {
    const where = "st.state <> 'CA'";
    await same(context, { dimensions: ['store.state'], measures: ['store_productivity'], where: "store.state <> 'CA'" }, ['state', 'store_productivity'], `
      SELECT k.state, s.paid / e.employees AS store_productivity
      FROM (SELECT state FROM (${salesByState} WHERE ${where} GROUP BY st.state) a UNION SELECT state FROM (${storesByState} WHERE ${where} GROUP BY st.state) b) k
      LEFT JOIN (${salesByState} WHERE ${where} GROUP BY st.state) s ON ${ns('s.state', 'k.state')}
      LEFT JOIN (${storesByState} WHERE ${where} GROUP BY st.state) e ON ${ns('e.state', 'k.state')}`);
  });

  test('fan-out: store measures by a sales field (one to many): each store once per channel, the store without sales in the NULL channel', async (context) => {
    const paid = `SELECT ss.channel, SUM(ss.net_paid) AS paid FROM ${t('cp_store_sales')} ss GROUP BY ss.channel`;
    const employees = `SELECT d.channel, SUM(st.number_employees) AS employees FROM ${t('cp_store')} st LEFT JOIN (SELECT DISTINCT store_sk, channel FROM ${t('cp_store_sales')}) d ON d.store_sk = st.store_sk GROUP BY d.channel`;
    await same(context, { dimensions: ['store_sales.channel'], measures: ['employees', 'store_productivity'] }, ['channel', 'employees', 'store_productivity'], `
      SELECT k.channel, e.employees, s.paid / e.employees AS store_productivity
      FROM (SELECT channel FROM (${paid}) a UNION SELECT channel FROM (${employees}) b) k
      LEFT JOIN (${paid}) s ON ${ns('s.channel', 'k.channel')}
      LEFT JOIN (${employees}) e ON ${ns('e.channel', 'k.channel')}`);
  });

  test('many-to-many through a bridge: item prices by promotion name (each item once per name, two promotions share one), over the bridge\'s own count', async (context) => {
    const promos = `SELECT DISTINCT ip.item_sk, p.promo_name FROM ${t('cp_item_promo')} ip LEFT JOIN ${t('cp_promo')} p ON p.promo_sk = ip.promo_sk`;
    const prices = `SELECT d.promo_name, SUM(i.price) AS price FROM ${t('cp_item')} i LEFT JOIN (${promos}) d ON d.item_sk = i.item_sk GROUP BY d.promo_name`;
    const links = `SELECT p.promo_name, COUNT(ip.promo_sk) AS links FROM ${t('cp_item_promo')} ip LEFT JOIN ${t('cp_promo')} p ON p.promo_sk = ip.promo_sk GROUP BY p.promo_name`;
    await same(context, { dimensions: ['promo.promo_name'], measures: ['promo_price', 'price_per_link'] }, ['promo_name', 'promo_price', 'price_per_link'], `
      SELECT k.promo_name, p.price AS promo_price, p.price / NULLIF(COALESCE(c.links, 0), 0) AS price_per_link
      FROM (SELECT promo_name FROM (${prices}) a UNION SELECT promo_name FROM (${links}) b) k
      LEFT JOIN (${prices}) p ON ${ns('p.promo_name', 'k.promo_name')}
      LEFT JOIN (${links}) c ON ${ns('c.promo_name', 'k.promo_name')}`);
  });

  test('a fact by a dimension across a bridge (store_sales → item ← item_promo → promo): each ticket once per promotion name', async (context) => {
    const promos = `SELECT DISTINCT ip.item_sk, p.promo_name FROM ${t('cp_item_promo')} ip LEFT JOIN ${t('cp_promo')} p ON p.promo_sk = ip.promo_sk`;
    const prices = `SELECT d.promo_name, SUM(i.price) AS price FROM ${t('cp_item')} i LEFT JOIN (${promos}) d ON d.item_sk = i.item_sk GROUP BY d.promo_name`;
    const tickets = `SELECT d.promo_name, COUNT(ss.ticket) AS tickets, SUM(ss.net_paid) AS paid FROM ${t('cp_store_sales')} ss LEFT JOIN ${t('cp_item')} i ON i.item_sk = ss.item_sk LEFT JOIN (${promos}) d ON d.item_sk = i.item_sk GROUP BY d.promo_name`;
    await same(context, { dimensions: ['promo.promo_name'], measures: ['net_paid', 'price_per_ticket'] }, ['promo_name', 'net_paid', 'price_per_ticket'], `
      SELECT k.promo_name, c.paid AS net_paid, p.price / NULLIF(COALESCE(c.tickets, 0), 0) AS price_per_ticket
      FROM (SELECT promo_name FROM (${prices}) a UNION SELECT promo_name FROM (${tickets}) b) k
      LEFT JOIN (${prices}) p ON ${ns('p.promo_name', 'k.promo_name')}
      LEFT JOIN (${tickets}) c ON ${ns('c.promo_name', 'k.promo_name')}`);
  });

  test('a model declaring no key: each relationship\'s to side is its one side; store_productivity by state and employees by channel equal the keyed model\'s oracle', async (context) => {
    await same(context, { dimensions: ['store.state'], measures: ['net_paid', 'employees', 'store_productivity'] }, ['state', 'net_paid', 'employees', 'store_productivity'], `
      SELECT k.state, s.paid AS net_paid, e.employees, s.paid / e.employees AS store_productivity
      FROM (SELECT state FROM (${salesByState} GROUP BY st.state) a UNION SELECT state FROM (${storesByState} GROUP BY st.state) b) k
      LEFT JOIN (${salesByState} GROUP BY st.state) s ON ${ns('s.state', 'k.state')}
      LEFT JOIN (${storesByState} GROUP BY st.state) e ON ${ns('e.state', 'k.state')}`, NOKEYS_VDB);
    const employees = `SELECT d.channel, SUM(st.number_employees) AS employees FROM ${t('cp_store')} st LEFT JOIN (SELECT DISTINCT store_sk, channel FROM ${t('cp_store_sales')}) d ON d.store_sk = st.store_sk GROUP BY d.channel`;
    await same(context, { dimensions: ['store_sales.channel'], measures: ['employees'] }, ['channel', 'employees'], employees, NOKEYS_VDB);
    const promos = `SELECT DISTINCT ip.item_sk, p.promo_name FROM ${t('cp_item_promo')} ip LEFT JOIN ${t('cp_promo')} p ON p.promo_sk = ip.promo_sk`;
    await same(context, { dimensions: ['promo.promo_name'], measures: ['promo_price'] }, ['promo_name', 'promo_price'],
      `SELECT d.promo_name, SUM(i.price) AS promo_price FROM ${t('cp_item')} i LEFT JOIN (${promos}) d ON d.item_sk = i.item_sk GROUP BY d.promo_name`, NOKEYS_VDB);
  });

  test('a model declaring no key: a fact no relationship points at has no key to count its rows once per group across a bridge: E3012 naming the relationship', async ({ service }) => {
    const reply = await ask(service, { dimensions: ['promo.promo_name'], measures: ['net_paid'] }, NOKEYS_VDB);
    assert.equal([reply.status, (reply.body['details'] as Row | undefined)?.['osiCode']], [400, 'E3012_MN_NO_SAFE_REWRITE'], JSON.stringify(reply.body));
    assert.match(String(reply.body['message']), /item_promo_to_item/);
  });

  const returnsByCategory = `SELECT p.product_cat, SUM(r.return_amount) AS amount, COUNT(r.return_id) AS n FROM ${t('cp_returns')} r LEFT JOIN ${t('cp_sales')} s ON r.return_sales_id = s.sales_id LEFT JOIN ${t('cp_products')} p ON s.product = p.product_id GROUP BY p.product_cat`;
  const salesByCategory = `SELECT p.product_cat, SUM(s.sales_amount) AS amount, COUNT(s.sales_id) AS n FROM ${t('cp_sales')} s LEFT JOIN ${t('cp_products')} p ON s.product = p.product_id GROUP BY p.product_cat`;
  const purchasesByCategory = `SELECT p.product_cat, SUM(u.purchase_price) AS amount FROM ${t('cp_purchases')} u LEFT JOIN ${t('cp_products')} p ON u.purchase_product_id = p.product_id GROUP BY p.product_cat`;

  test('OrionBelt return_rate by category: the category without returns kept, a sale returned twice counted once', async (context) => {
    await same(context, { dimensions: ['products.product_cat'], measures: ['return_rate', 'return_ratio', 'net_sales'] }, ['product_cat', 'return_rate', 'return_ratio', 'net_sales'], `
      SELECT k.product_cat, r.amount / s.amount AS return_rate,
        CAST(COALESCE(r.n, 0) AS DECIMAL(12,4)) / NULLIF(COALESCE(s.n, 0), 0) AS return_ratio, s.amount - r.amount AS net_sales
      FROM (SELECT product_cat FROM (${returnsByCategory}) a UNION SELECT product_cat FROM (${salesByCategory}) b) k
      LEFT JOIN (${returnsByCategory}) r ON ${ns('r.product_cat', 'k.product_cat')}
      LEFT JOIN (${salesByCategory}) s ON ${ns('s.product_cat', 'k.product_cat')}`);
  });

  test('a chasm: sales and purchases share products; margin by category keeps the category with purchases only', async (context) => {
    await same(context, { dimensions: ['products.product_cat'], measures: ['margin'] }, ['product_cat', 'margin'], `
      SELECT k.product_cat, s.amount - u.amount AS margin
      FROM (SELECT product_cat FROM (${salesByCategory}) a UNION SELECT product_cat FROM (${purchasesByCategory}) b) k
      LEFT JOIN (${salesByCategory}) s ON ${ns('s.product_cat', 'k.product_cat')}
      LEFT JOIN (${purchasesByCategory}) u ON ${ns('u.product_cat', 'k.product_cat')}`);
  });

  test('an ad-hoc measure combining two tables is composed the same way as the model metric', async (context) => {
    await same(context, { dimensions: ['products.product_cat'], measures: ['SUM(returns.return_amount) / SUM(sales.sales_amount) AS rate'] }, ['product_cat', 'rate'], `
      SELECT k.product_cat, r.amount / s.amount AS rate
      FROM (SELECT product_cat FROM (${returnsByCategory}) a UNION SELECT product_cat FROM (${salesByCategory}) b) k
      LEFT JOIN (${returnsByCategory}) r ON ${ns('r.product_cat', 'k.product_cat')}
      LEFT JOIN (${salesByCategory}) s ON ${ns('s.product_cat', 'k.product_cat')}`);
  });

  // The OSI Foundation compliance vectors over its prelude data (f_prelude).
  const preludeRevenue = `SELECT c.region, SUM(o.amount) AS revenue, COUNT(*) AS row_count FROM ${t('fp_orders')} o LEFT JOIN ${t('fp_customers')} c ON o.customer_id = c.id GROUP BY c.region`;

  test('COUNT(*) beside measures of one fact takes that fact as home: 3 groups, the orphan order counted in the NULL group (D-016)', async ({ raw, service }) => {
    const expected = normal((await raw.query(preludeRevenue, [])).rows, ['region', 'revenue', 'row_count']);
    assert.equal(expected, normal([{ region: 'EAST', revenue: 350, row_count: 3 }, { region: 'WEST', revenue: 75, row_count: 1 }, { region: null, revenue: 30, row_count: 1 }], ['region', 'revenue', 'row_count']));
    const columns = ['region', 'revenue', 'row_count'];
    assert.equal(await answer(service, { dimensions: ['customers.region'], measures: ['SUM(orders.amount) AS revenue', 'COUNT(*) AS row_count'] }, columns, PRELUDE_VDB), expected);
    // The model metric COUNT(*) takes the same home.
    assert.equal(await answer(service, { dimensions: ['customers.region'], measures: [{ metric: 'total_revenue', alias: 'revenue' }, 'row_count'] }, columns, PRELUDE_VDB), expected);
  });

  test('COUNT(*) with a where on the fact counts the fact\'s rows (T-006: EAST 2, WEST 1, NULL 1), as an expression and as a model metric', async ({ service }) => {
    const body = (measure: unknown) => ({ dimensions: ['customers.region'], measures: [measure], where: "orders.status = 'completed'" });
    const expected = normal([{ region: 'EAST', n: 2 }, { region: 'WEST', n: 1 }, { region: null, n: 1 }], ['region', 'n']);
    assert.equal(await answer(service, body('COUNT(*) AS n'), ['region', 'n'], PRELUDE_VDB), expected);
    assert.equal(await answer(service, body({ metric: 'row_count', alias: 'n' }), ['region', 'n'], PRELUDE_VDB), expected);
  });

  test('the model metric COUNT(*) alone (no dimension, no filter) counts the rows of its model\'s fact: orders, 5; COUNT(*) alone in a query has nothing to count', async ({ raw, service }) => {
    const expected = normal((await raw.query(`SELECT COUNT(*) AS row_count FROM ${t('fp_orders')}`, [])).rows, ['row_count']);
    assert.equal(expected, [[5]]);
    assert.equal(await answer(service, { measures: ['row_count'] }, ['row_count'], PRELUDE_VDB), expected);
    const both = normal((await raw.query(`SELECT COUNT(*) AS row_count, SUM(amount) AS revenue FROM ${t('fp_orders')}`, [])).rows, ['row_count', 'revenue']);
    assert.equal(await answer(service, { measures: ['row_count', { metric: 'total_revenue', alias: 'revenue' }] }, ['row_count', 'revenue'], PRELUDE_VDB), both);
    await refused(service, { measures: ['COUNT(*) AS n'] }, 'E_INVALID_QUERY', PRELUDE_VDB);
  });

  test('COUNT(*) beside aggregates of two homes counts the query\'s dataset when it is one of them, else E_AMBIGUOUS_MEASURE_GRAIN', async ({ raw, service }) => {
    const oracle = `SELECT s.product, SUM(s.sales_amount) AS total_sales, COUNT(*) AS n FROM ${t('cp_sales')} s GROUP BY s.product`;
    const expected = normal((await raw.query(oracle, [])).rows, ['product', 'total_sales', 'n']);
    assert.equal(await answer(service, { dimensions: ['sales.product'], measures: ['total_sales', 'total_returns', 'COUNT(*) AS n'] }, ['product', 'total_sales', 'n']), expected);
    await refused(service, { dimensions: ['products.product_cat'], measures: ['total_sales', 'total_returns', 'COUNT(*) AS n'] }, 'E_AMBIGUOUS_MEASURE_GRAIN');
  });

  test('a decimal literal keeps its decimals: COUNT(sales.sales_id) * 1.0 / 8 is 37.5, not an integer division', async ({ service }) => {
    assert.equal(await answer(service, { measures: ['COUNT(sales.sales_id) * 1.0 / 8 AS x'] }, ['x']), [[37.5]]);
  });

  test('a nested window is refused before any SQL runs with E_NESTED_WINDOW (T-030): in a model (409, at activation), a measure, a scalar field (400)', async ({ service }) => {
    const model = await ask(service, { dimensions: ['customers.region'], measures: ['total_revenue'] }, NESTED_VDB);
    assert.equal([model.status, model.body['code'], (model.body['details'] as Row | undefined)?.['osiCode']], [409, 'semantic_unavailable', 'E_NESTED_WINDOW'], JSON.stringify(model.body));
    await refused(service, { dimensions: ['orders.customer_id'], measures: ['SUM(SUM(orders.amount) OVER (PARTITION BY orders.customer_id)) OVER () AS w'] }, 'E_NESTED_WINDOW', PRELUDE_VDB);
    await refused(service, { fields: ['orders.id', { expression: 'SUM(ROW_NUMBER() OVER (ORDER BY orders.id)) OVER ()', alias: 'w' }] }, 'E_NESTED_WINDOW', PRELUDE_VDB);
  });

  test.run();
}
