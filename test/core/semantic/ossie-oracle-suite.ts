import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { dataStatements, dropStatements, namespaceStatements, ossieBundleFiles, ossieFixtures, ossieSchema, schemaStatements, type GeneratedSchema, type SqlFamily } from '../../support/ossie-models.js';
import { demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { skippedHere } from '../../support/backends.js';

/**
 * Apache Ossie's public models, activated unchanged over generated data, answer semantic queries with the
 * numbers of the SQL an analyst writes by hand: per model, its metrics (bare columns of the fact, columns
 * without fields, COUNT(*), vendor dialects) by dimensions reached many-to-one, on each backend.
 */
export interface OracleBackend {
  name: string;
  skip?: string | undefined;
  family: SqlFamily;
  /** The service's datasource config (the open datasource is handed in under `ossie_db`). */
  datasourceConfig: Record<string, unknown>;
  /** Makes the database the generated schemas go into, before `open`. */
  prepare?(): Promise<void>;
  /** Opens the database the tables go into. */
  open(): Promise<Datasource>;
  closeAfter: boolean;
  /** Drops what `prepare` and the schema statements made, after the tables are dropped (and `raw` closed when `closeAfter`). */
  cleanup?(schema: GeneratedSchema, raw: Datasource): Promise<void>;
}

type Row = Record<string, unknown>;

export interface OracleCase {
  /** The fixture's slug (its VDB name). */
  model: string;
  title: string;
  query: Record<string, unknown>;
  /** The analyst's SQL; `t('schema', 'table')` qualifies a table; its columns `c0`, `c1`, … in the order of `columns`. */
  sql: (t: (schema: string, table: string) => string, family: SqlFamily) => string;
  columns: string[];
}

/** Numbers as the drivers give them (strings for decimals), rounded, NULL as null; rows sorted. */
function normal(rows: unknown[][]): unknown[][] {
  const value = (cell: unknown) => {
    if (cell === null || cell === undefined) return null;
    const number = typeof cell === 'number' ? cell : typeof cell === 'string' && /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(cell) ? Number(cell) : undefined;
    return number === undefined ? cell : Math.round(number * 10_000) / 10_000;
  };
  return rows.map((row) => row.map(value)).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

const fromSemantic = (rows: Row[], columns: string[]) => rows.map((row) => columns.map((column) => row[column]));
const fromSql = (rows: Row[], columns: string[]) => rows.map((row) => columns.map((_, index) => row[`c${index}`]));

export const ORACLE_CASES: OracleCase[] = [
  {
    model: 'examples-tpcds-semantic-model',
    title: 'TPC-DS example: total_sales and total_profit by store state (store_sales many-to-one store)',
    query: { dimensions: ['store.s_state'], measures: ['total_sales', 'total_profit'] },
    sql: (t) => `select st.s_state as c0, sum(ss.ss_ext_sales_price) as c1, sum(ss.ss_net_profit) as c2 from ${t('public', 'store_sales')} ss left join ${t('public', 'store')} st on ss.ss_store_sk = st.s_store_sk group by st.s_state`,
    columns: ['s_state', 'total_sales', 'total_profit'],
  },
  {
    model: 'examples-tpcds-semantic-model',
    title: 'TPC-DS example: total_sales by year and item category (two dimensions over two many-to-one relationships)',
    query: { dimensions: ['date_dim.d_year', 'item.i_category'], measures: ['total_sales'] },
    sql: (t) => `select d.d_year as c0, i.i_category as c1, sum(ss.ss_ext_sales_price) as c2 from ${t('public', 'store_sales')} ss left join ${t('public', 'date_dim')} d on ss.ss_sold_date_sk = d.d_date_sk left join ${t('public', 'item')} i on ss.ss_item_sk = i.i_item_sk group by d.d_year, i.i_category`,
    columns: ['d_year', 'i_category', 'total_sales'],
  },
  {
    model: 'databricks-fixturea-ossie',
    title: 'Databricks fixture A: SUM(o_totalprice) (a bare column of the fact, no field) and COUNT(*) by customer name',
    query: { dimensions: ['customer.c_name'], measures: ['total_revenue', 'order_count'] },
    sql: (t) => `select c.c_name as c0, sum(o.o_totalprice) as c1, count(*) as c2 from ${t('tpch', 'orders')} o left join ${t('tpch', 'customer')} c on o.o_custkey = c.c_custkey group by c.c_name`,
    columns: ['c_name', 'total_revenue', 'order_count'],
  },
  {
    model: 'databricks-fixturea-ossie',
    title: 'Databricks fixture A: order_count (COUNT(*)) asked alone counts the rows of the model\'s fact, orders',
    query: { measures: ['order_count'] },
    sql: (t) => `select count(*) as c0 from ${t('tpch', 'orders')}`,
    columns: ['order_count'],
  },
  {
    model: 'databricks-fixtureb-ossie',
    title: 'Databricks fixture B: SUM(l_extendedprice * (1 - l_discount)) and COUNT(DISTINCT l_orderkey) by line number',
    query: { dimensions: ['lineitem.line_number'], measures: ['revenue', 'order_count'] },
    sql: (t) => `select l_linenumber as c0, sum(l_extendedprice * (1 - l_discount)) as c1, count(distinct l_orderkey) as c2 from ${t('tpch', 'lineitem')} group by l_linenumber`,
    columns: ['line_number', 'revenue', 'order_count'],
  },
  {
    model: 'databricks-tpcds-ossie',
    title: 'Databricks TPC-DS: total_sales and total_quantity by item_category (a field named apart from its column)',
    query: { dimensions: ['item.item_category'], measures: ['total_sales', 'total_quantity'] },
    sql: (t) => `select i.i_category as c0, sum(ss.ss_ext_sales_price) as c1, sum(ss.ss_quantity) as c2 from ${t('public', 'store_sales')} ss left join ${t('public', 'item')} i on ss.ss_item_sk = i.i_item_sk group by i.i_category`,
    columns: ['item_category', 'total_sales', 'total_quantity'],
  },
  {
    model: 'gooddata-osi-tpcds',
    title: 'GoodData TPC-DS (no metrics): an ad-hoc SUM of the fact by store city',
    query: { dimensions: ['store.s_city'], measures: [{ expression: 'SUM(store_sales.ss_net_profit)', alias: 'profit' }] },
    sql: (t) => `select st.s_city as c0, sum(ss.ss_net_profit) as c1 from ${t('public', 'store_sales')} ss left join ${t('public', 'store')} st on ss.ss_store_sk = st.s_store_sk group by st.s_city`,
    columns: ['s_city', 'profit'],
  },
  {
    model: 'gsf-sales-ossie',
    title: 'GSF sales: SUM(orders.subtotal) (a column without a field) / COUNT(DISTINCT customers.customer_id) by customer name',
    query: { dimensions: ['customers.customer_name'], measures: ['revenue_per_customer'], where: 'customers.customer_name IS NOT NULL' },
    sql: (t) => `select c.name as c0, sum(o.subtotal) / count(distinct c.customer_id) as c1 from ${t('public', 'orders')} o left join ${t('public', 'customers')} c on o.customer_id = c.customer_id where c.name is not null group by c.name`,
    columns: ['customer_name', 'revenue_per_customer'],
  },
  {
    model: 'gsf-sales-ossie',
    title: 'GSF sales: ad-hoc measures over columns of orders that no field names (subtotal, discount) by customer name',
    query: { dimensions: ['customers.customer_name'], measures: [{ expression: 'SUM(orders.subtotal)', alias: 'subtotal' }, 'SUM(orders.discount) - MAX(orders.DISCOUNT) AS d'] },
    sql: (t) => `select c.name as c0, sum(o.subtotal) as c1, sum(o.discount) - max(o.discount) as c2 from ${t('public', 'orders')} o left join ${t('public', 'customers')} c on o.customer_id = c.customer_id group by c.name`,
    columns: ['customer_name', 'subtotal', 'd'],
  },
  {
    model: 'omni-fixturea-osi',
    title: 'Omni fixture A: total_revenue and COUNT(*) by customer name',
    query: { dimensions: ['customer.c_name'], measures: ['total_revenue', 'order_count'] },
    sql: (t) => `select c.c_name as c0, sum(o.o_totalprice) as c1, count(*) as c2 from ${t('tpch', 'orders')} o left join ${t('tpch', 'customer')} c on o.o_custkey = c.c_custkey group by c.c_name`,
    columns: ['c_name', 'total_revenue', 'order_count'],
  },
  {
    model: 'orionbelt-obml-as-osi',
    title: 'OrionBelt (ANALYTICS.PUBLIC.* sources): total_sales and sales_count by client gender',
    query: { dimensions: ['clients.client_gender'], measures: ['total_sales', 'sales_count'] },
    sql: (t) => `select c.client_gender as c0, sum(s.sales_amount) as c1, count(distinct s.sales_id) as c2 from ${t('public', 'sales')} s left join ${t('public', 'clients')} c on s.sales_client = c.client_id group by c.client_gender`,
    columns: ['client_gender', 'total_sales', 'sales_count'],
  },
  {
    model: 'orionbelt-obml-as-osi',
    title: 'OrionBelt: total_sales_qty by product category; by country it is E_AMBIGUOUS_PATH (through clients, and through products and suppliers)',
    query: { dimensions: ['products.product_cat'], measures: ['total_sales_qty'] },
    sql: (t) => `select p.product_cat as c0, sum(s.sales_quantity) as c1 from ${t('public', 'sales')} s left join ${t('public', 'products')} p on s.product = p.product_id group by p.product_cat`,
    columns: ['product_cat', 'total_sales_qty'],
  },
  {
    model: 'orionbelt-tpcds-osi',
    title: 'OrionBelt TPC-DS (version 0.1.1): total_sales by store state',
    query: { dimensions: ['store.s_state'], measures: ['total_sales'] },
    sql: (t) => `select st.s_state as c0, sum(ss.ss_ext_sales_price) as c1 from ${t('public', 'store_sales')} ss left join ${t('public', 'store')} st on ss.ss_store_sk = st.s_store_sk group by st.s_state`,
    columns: ['s_state', 'total_sales'],
  },
  {
    model: 'dbt-test-msi-to-osi-testmetricconversion-test-derived-metric-nested',
    title: 'dbt: metrics written as aggregates of columns (amount) that no field names, over schema.table',
    query: { measures: ['gross_profit', 'net_profit'] },
    sql: (t) => `select sum(amount) - sum(cost_amount) as c0, (sum(amount) - sum(cost_amount)) - sum(expense_amount) as c1 from ${t('schema', 'table')}`,
    columns: ['gross_profit', 'net_profit'],
  },
];

/**
 * Two grouped sides combined per group as a FULL OUTER JOIN on the group key (NULL matching NULL) would, a
 * group missing on one side keeping its row with NULL there: a LEFT JOIN, and the right side's groups the
 * left lacks (MySQL and MariaDB have no FULL JOIN, and PostgreSQL's needs an equality to join on).
 */
function fullJoin(family: SqlFamily, left: string, right: string, select: string): string {
  const same = (a: string, b: string) => (family === 'mysql' ? `${a} <=> ${b}` : `${a} is not distinct from ${b}`);
  return `with l as (${left}), r as (${right}) select ${select} from l left join r on ${same('l.k', 'r.k')}`
    + ` union all select ${select} from r left join l on ${same('l.k', 'r.k')} where not exists (select 1 from l l2 where ${same('l2.k', 'r.k')})`;
}

/**
 * Metrics whose aggregates have different homes (Foundation §4.5, §6.7): each aggregate is computed at its own
 * home by the query's dimensions, then combined (the semantic query compiler's composition).
 */
export const COMPOSITION_CASES: OracleCase[] = [
  {
    model: 'examples-tpcds-semantic-model',
    title: 'TPC-DS example: store_productivity by state: sales summed over sales lines, employees over stores, each store once',
    query: { dimensions: ['store.s_state'], measures: ['store_productivity'] },
    sql: (t, family) => fullJoin(family,
      `select st.s_state as k, sum(ss.ss_ext_sales_price) as v from ${t('public', 'store_sales')} ss left join ${t('public', 'store')} st on ss.ss_store_sk = st.s_store_sk group by st.s_state`,
      `select s_state as k, sum(s_number_employees) as v from ${t('public', 'store')} group by s_state`,
      'coalesce(l.k, r.k) as c0, l.v / nullif(r.v, 0) as c1'),
    columns: ['s_state', 'store_productivity'],
  },
  {
    model: 'orionbelt-obml-as-osi',
    title: 'OrionBelt: return_rate by product category: returns summed at returns, sales at sales; categories without returns keep their row',
    query: { dimensions: ['products.product_cat'], measures: ['return_rate'] },
    sql: (t, family) => fullJoin(family,
      `select p.product_cat as k, sum(r.return_amount) as v from ${t('public', 'returns')} r left join ${t('public', 'sales')} s on r.return_sales_id = s.sales_id left join ${t('public', 'products')} p on s.product = p.product_id group by p.product_cat`,
      `select p.product_cat as k, sum(s.sales_amount) as v from ${t('public', 'sales')} s left join ${t('public', 'products')} p on s.product = p.product_id group by p.product_cat`,
      'coalesce(l.k, r.k) as c0, l.v / r.v as c1'),
    columns: ['product_cat', 'return_rate'],
  },
];

export function runOracleSuite(backend: OracleBackend, cases: readonly OracleCase[] = [...ORACLE_CASES, ...COMPOSITION_CASES]): void {
  const test = suite<{ raw?: Datasource; service: TestService; schema: GeneratedSchema }>(`${backend.name}: Apache Ossie models answer as hand-written SQL`);
  if (skippedHere(test, backend)) return;
  const q = (name: string) => (backend.family === 'mysql' ? `\`${name}\`` : `"${name}"`);
  const t = (schema: string, table: string) => `${q(schema)}.${q(table)}`;

  test.before(async (context) => {
    const models = ossieFixtures().filter((fixture) => fixture.document.semantic_model !== undefined && !fixture.name.includes('/src/test/'));
    context.schema = await ossieSchema(models);
    await backend.prepare?.();
    context.raw = await backend.open();
    for (const statement of [...namespaceStatements(context.schema, backend.family), ...dropStatements(context.schema, backend.family), ...schemaStatements(context.schema, backend.family), ...dataStatements(context.schema, backend.family)]) {
      await context.raw.query(statement, []);
    }
    const files = Object.fromEntries(Object.entries(ossieBundleFiles(models, 'ossie_db', context.schema)).map(([path, text]) => [`bundle/${path}`, text]));
    context.service = await startTestService({ config: demoConfig({ descriptors: './bundle', datasources: { ossie_db: backend.datasourceConfig } }), files, datasources: { ossie_db: context.raw } });
  });
  test.after(async ({ raw, service, schema }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw);
    for (const statement of dropStatements(schema, backend.family)) await raw.query(statement, []);
    if (backend.closeAfter) await raw.close();
    await backend.cleanup?.(schema, raw);
  });

  for (const oracle of cases) {
    test(oracle.title, async ({ service, raw }) => {
      const response = await service.request(`/api/v1/semantic/vdbs/${oracle.model}/versions/1/query`, { method: 'POST', body: JSON.stringify(oracle.query), headers: { 'content-type': 'application/json' } });
      const body = await response.json() as { rows: Row[] };
      assert.is(response.status, 200, JSON.stringify(body));
      const expected = await (raw as Datasource).query(oracle.sql(t, backend.family), []);
      const got = normal(fromSemantic(body.rows, oracle.columns));
      assert.ok(got.length > 1 || oracle.query['dimensions'] === undefined, 'the data gives several groups');
      assert.equal(got, normal(fromSql(expected.rows as Row[], oracle.columns)));
    });
  }
  test.run();
}
