// test-lane: postgres-server, mysql-server
/**
 * Joins within one source and aggregations pushed to it (docs/federation.md#the-plan), on the corpus's shop
 * with its customers, regions and products on MariaDB (a case-folding collation) and its orders and lines on
 * PostgreSQL: the explain shows the pushed statement, and the rows each source returned
 * (`vdb_federated_source_rows_total`) are only those the question needs. Shipping is off: the engine's
 * plan is what is read here.
 */
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { samplesOf, sampleValue } from '../../support/prometheus-text.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { TEXT_PARSERS } from './corpus-oracle.js';
import { shopSetup, shopVdb } from './shop-data.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;
const mysql = BACKENDS.find((backend) => backend.name === 'mysql') as Backend;

const VDB = shopVdb('fedpush');

interface Plan {
  sources: { datasource: string; sql: string; dependentOn?: string }[];
  engine: { sql: string };
}

interface Context {
  crm: Datasource;
  shop: Datasource;
  service: TestService;
  door: pg.Client;
}

async function sourceRows(service: TestService, datasource: string): Promise<number> {
  const text = await (await service.request('/observe/metrics')).text();
  return sampleValue(samplesOf(text), 'vdb_federated_source_rows_total', { datasource });
}

async function explain(door: pg.Client, sql: string): Promise<Plan> {
  const result = await door.query(`explain ${sql}`);
  return JSON.parse(String(result.rows[0]?.['QUERY PLAN'])) as Plan;
}

const source = (plan: Plan, datasource: string) => plan.sources.filter((candidate) => candidate.datasource === datasource);

/** The rows `sql` answers, and how many rows each source returned for it. */
async function run(context: Context, sql: string): Promise<{ rows: unknown[][]; shopRows: number; crmRows: number }> {
  const before = [await sourceRows(context.service, 'shop_db'), await sourceRows(context.service, 'crm_db')];
  const result = await context.door.query({ text: sql, rowMode: 'array' });
  return {
    rows: result.rows as unknown[][],
    shopRows: await sourceRows(context.service, 'shop_db') - (before[0] as number),
    crmRows: await sourceRows(context.service, 'crm_db') - (before[1] as number),
  };
}

const test = suite<Context>('federation: joins and aggregations pushed to their source (MariaDB + PostgreSQL)');

if (!skippedHere(test, postgres) && !skippedHere(test, mysql)) {
  test.before(async (context) => {
    context.crm = await mysql.open('crm_db');
    context.shop = await postgres.open('shop_db');
    for (const statement of shopSetup('mysql', 'fed_crm')) await context.crm.query(statement, []);
    for (const statement of shopSetup('postgres', 'fed_shop')) await context.shop.query(statement, []);
    context.service = await startTestService({
      config: demoConfig({ descriptors: './bundle', datasources: { crm_db: mysql.datasourceConfig, shop_db: postgres.datasourceConfig }, sql: { enabled: true, port: 0 }, federation: { shipMaxRows: 0 } }),
      files: { 'bundle/vdbs/fedpush.yaml': VDB },
      datasources: { crm_db: context.crm, shop_db: context.shop },
    });
    const { port } = context.service.sqlAddress as { port: number };
    context.door = new pg.Client({ host: '127.0.0.1', port, database: 'fedpush@1', user: 'tester', password: ANALYST_TOKEN, types: TEXT_PARSERS });
    await context.door.connect();
  });

  test.after(async ({ crm, shop, service, door }) => {
    await door?.end();
    await service?.close();
    if (crm) {
      await crm.query('drop database if exists fed_crm', []);
      await dropSyncedRoles(service, crm).catch(() => undefined);
    }
    if (shop) {
      await shop.query('drop schema if exists fed_shop cascade', []);
      await dropSyncedRoles(service, shop);
    }
    if (crm) await dropSyncedRoles(service, crm);
    await crm?.close();
    await shop?.close();
  });

  test('one customer\'s orders and lines: orders ⋈ order_lines is one statement on PostgreSQL, bound to the customer\'s keys; it returns only her 7 lines', async (context) => {
    const sql = `select o.id, l.line_no, l.quantity from fed_crm.customers c
      join fed_shop.orders o on o.customer_id = c.id
      join fed_shop.order_lines l on l.order_id = o.id
      where c.email = 'ben@x.org' order by o.id, l.line_no`;
    const plan = await explain(context.door, sql);
    const [shop] = source(plan, 'shop_db');
    assert.is(source(plan, 'shop_db').length, 1, JSON.stringify(plan));
    assert.match(String(shop?.sql), /FROM "fed_shop"\."orders" "o", "fed_shop"\."order_lines" "l" WHERE "l"\."order_id" = "o"\."id" AND "o"\."customer_id" = ANY\(\?\)$/);
    assert.is(shop?.dependentOn, 'crm_db');
    const answer = await run(context, sql);
    // ben@x.org is customer 5: orders 6 (3 lines) and 19 (4 lines)
    assert.equal(answer.rows.map((row) => `${row[0]}/${row[1]}`), ['6/1', '6/2', '6/3', '19/1', '19/2', '19/3', '19/4']);
    assert.is(answer.shopRows, 7, 'rows PostgreSQL returned: the customer\'s lines, joined to their orders there');
    assert.is(answer.crmRows, 1, 'rows MariaDB returned: the customer');
  });

  test('revenue by region: the lines ⋈ orders aggregated by customer on PostgreSQL, one row per customer; then joined and aggregated again', async (context) => {
    const sql = `select c.region, sum(l.quantity * l.unit_price) as revenue, count(*) as lines, count(l.product_id) as priced, min(l.unit_price) as cheapest, max(o.total) as largest
      from fed_shop.order_lines l
      join fed_shop.orders o on o.id = l.order_id
      join fed_crm.customers c on c.id = o.customer_id
      group by c.region order by c.region nulls first`;
    const plan = await explain(context.door, sql);
    const [shop] = source(plan, 'shop_db');
    assert.match(String(shop?.sql), /SUM\(\("l"\."quantity" \* "l"\."unit_price"\)\) AS "vdb_agg_1", COUNT\(\*\) AS "vdb_agg_2", COUNT\("l"\."product_id"\) AS "vdb_agg_3"/);
    assert.match(String(shop?.sql), / GROUP BY "o"\."customer_id"$/);
    const groups = await context.shop.query('select count(*)::int as n from (select o.customer_id from fed_shop.orders o join fed_shop.order_lines l on l.order_id = o.id group by o.customer_id) g', []);
    const answer = await run(context, sql);
    assert.is(answer.shopRows, Number(groups.rows[0]?.['n']), 'one row per customer with lines, not one per line');
    const lines = await context.shop.query('select count(*)::int as n from fed_shop.order_lines', []);
    assert.ok(answer.shopRows < Number(lines.rows[0]?.['n']), `${answer.shopRows} rows`);
    assert.ok(answer.rows.length > 1);
  });

  test('a join of two MariaDB relations on a text key is pushed comparing the bytes, not the folding collation', async ({ door }) => {
    const plan = await explain(door, `select o.id, r.name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id
      join fed_crm.regions r on r.code = c.region where o.id <= 10 order by o.id`);
    const [crm] = source(plan, 'crm_db');
    assert.is(source(plan, 'crm_db').length, 1, JSON.stringify(plan));
    assert.match(String(crm?.sql), /FROM `fed_crm`\.`customers` `c`, `fed_crm`\.`regions` `r` WHERE CAST\(`r`\.`code` AS BINARY\) = CAST\(`c`\.`region` AS BINARY\)/);
  });

  test('a left join within MariaDB is pushed whole, its ON condition with it', async ({ door }) => {
    const plan = await explain(door, `select c.id, r.name from fed_crm.customers c left join fed_crm.regions r on r.code = c.region and r.id > 1
      join fed_shop.orders o on o.customer_id = c.id order by o.id`);
    const [crm] = source(plan, 'crm_db');
    assert.match(String(crm?.sql), /FROM `fed_crm`\.`customers` `c` LEFT JOIN `fed_crm`\.`regions` `r` ON CAST\(`r`\.`code` AS BINARY\) = CAST\(`c`\.`region` AS BINARY\) AND `r`\.`id` > \?/);
  });

  test('a bound value read only by a condition pushed into a join is bound there, and the engine\'s statement binds the others', async ({ door }) => {
    const sql = `select o.id, l.line_no, c.name from fed_shop.orders o join fed_shop.order_lines l on l.order_id = o.id
      join fed_crm.customers c on c.id = o.customer_id where o.status = %1 and c.tier = %2 and l.quantity > %3 order by o.id, l.line_no`;
    const bound = await door.query({ text: sql.replace('%1', '$1').replace('%2', '$2').replace('%3', '$3'), values: ['shipped', 2, 2], rowMode: 'array' });
    const literal = await door.query({ text: sql.replace('%1', "'shipped'").replace('%2', '2').replace('%3', '2'), rowMode: 'array' });
    assert.ok(literal.rows.length > 0, 'the statement answers rows');
    assert.equal(bound.rows, literal.rows);
  });

  test('an aggregation of one source in a CTE is pushed to it whole', async ({ door }) => {
    const plan = await explain(door, `with spent as (select customer_id, sum(total) as total from fed_shop.orders group by customer_id)
      select c.name, s.total from spent s join fed_crm.customers c on c.id = s.customer_id order by s.total desc, c.id`);
    const [shop] = source(plan, 'shop_db');
    assert.match(String(shop?.sql), /SUM\("orders"\."total"\) AS "vdb_agg_1" FROM "fed_shop"\."orders" "orders" GROUP BY "orders"\."customer_id"$/);
  });
}

test.run();
