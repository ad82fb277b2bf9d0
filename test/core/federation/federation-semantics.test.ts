/**
 * A VDB over PGlite and a PostgreSQL server: statements over both, through the SQL door, answer what the same
 * statement answers on one PostgreSQL holding copies of both tables in collation "C" (docs/federation.md).
 */
import type pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { canonicalDecimal } from '../../../core/sql/value-encoding.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { pgClient } from '../../support/sql-clients.js';
import { ADMIN_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;

const ORDERS = [
  'create table %s.orders (id int primary key, customer_id int, amount numeric(10,2), qty int, shipped date, note text %c, at timestamp)',
  `insert into %s.orders values
    (1, 1, 10.50, 3, '2024-01-05', 'a_b', '2024-01-05 10:00:00'), (2, 1, 5.25, 1, null, 'a%b', '2024-01-06 11:30:00'),
    (3, 2, 7.00, 2, '2024-02-01', 'axb', null), (4, 3, 1.10, 7, '2024-02-03', null, '2024-02-03 08:00:00'),
    (5, null, 2.00, 5, '2024-03-01', 'Zed', '2024-03-01 00:00:00'), (6, 2, 100.00, -7, null, 'zed', '2024-03-02 12:00:00'),
    (7, 4, null, null, '2024-03-05', 'é', null)`,
];
const CUSTOMERS = [
  'create table %s.customers (id int primary key, name text %c, region text %c, vip boolean, seen timestamptz)',
  `insert into %s.customers values (1, 'Alice', 'North', true, '2024-01-01 10:00:00+02'), (2, 'alice', 'South', false, '2024-01-01 08:30:00.25+00'),
    (3, 'Bob', null, null, null), (4, 'Émile', 'North', false, '2023-12-31 23:00:00-05'), (5, 'Zoe', 'East', true, '2024-06-01 00:00:00+00')`,
];

function statements(list: readonly string[], schema: string, collate: string): string[] {
  return list.map((statement) => statement.replaceAll('%s', schema).replaceAll('%c', collate));
}

/** Each statement names `fedp.orders` (PGlite) and `fedq.customers` (PostgreSQL); the oracle reads both from `fedo`. */
const CORPUS = [
  'select o.id, c.name from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select c.region, sum(o.amount) as revenue, count(*), count(o.amount) as priced from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by c.region',
  'select c.region, sum(o.amount) from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by c.region desc',
  'select o.id, c.name from fedp.orders o left join fedq.customers c on c.id = o.customer_id order by c.name, o.id',
  'select o.id, c.name from fedp.orders o full join fedq.customers c on c.id = o.customer_id order by o.id nulls first, c.name',
  'select c.name from fedq.customers c where c.id not in (select o.customer_id from fedp.orders o) order by 1',
  'select c.name from fedq.customers c where c.id not in (select o.customer_id from fedp.orders o where o.customer_id is not null) order by 1',
  'select c.name from fedq.customers c where not exists (select 1 from fedp.orders o where o.customer_id = c.id) order by 1',
  'select o.qty / 2 as half, o.qty % 4 as rest, o.amount * o.qty as total, c.name from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select c.name, o.note from fedp.orders o join fedq.customers c on c.id = o.customer_id where c.name > \'B\' order by c.name, o.note',
  'select c.name from fedq.customers c join fedp.orders o on o.customer_id = c.id where c.name = \'alice\' order by o.id',
  'select o.note from fedp.orders o cross join fedq.customers c where c.id = 1 and o.note like \'a\\_b\' order by 1',
  'select o.note, c.name from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.note desc, c.name',
  'select c.vip, count(*) as n, min(o.shipped) as first, max(o.at) as last from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.vip order by c.vip',
  'select distinct c.region from fedp.orders o join fedq.customers c on c.id = o.customer_id order by 1',
  'select o.customer_id from fedp.orders o union select c.id from fedq.customers c order by 1',
  'select c.id, (select sum(o.qty) from fedp.orders o where o.customer_id = c.id) as qty from fedq.customers c order by c.id',
  'with totals as (select customer_id, sum(amount) as total from fedp.orders group by customer_id) select c.name, t.total from totals t join fedq.customers c on c.id = t.customer_id where t.total > 10 order by 2 desc',
  'select c.name, coalesce(o.note, \'none\') as note, case when o.qty > 2 then \'many\' else \'few\' end as size from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  // a CASE's type is its branches' together: THEN 0 ELSE a numeric sums numerics, not integers
  'select c.region, sum(case when c.vip then 0 else o.amount end) as plain, sum(case when c.vip then o.amount end) as vip from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by c.region',
  'select c.region, count(*) from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region having count(*) > 1 order by 1',
  'select o.id, c.name from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.amount desc limit 2 offset 1',
  'select o.shipped + 1 as next_day, o.id from fedp.orders o join fedq.customers c on c.id = o.customer_id where o.shipped between \'2024-01-01\' and \'2024-02-02\' order by o.id',
  'select cast(o.amount as int) as whole, o.amount::text as text, c.id::text || \'-\' || c.name as label from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select count(distinct c.region) from fedp.orders o join fedq.customers c on c.id = o.customer_id',
  'select o.id from fedp.orders o join fedq.customers c on c.id = o.customer_id where c.vip is not true order by 1',
  'select c.region, avg(o.amount) as mean, avg(o.qty), avg(distinct o.customer_id) from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by c.region',
  'select avg(o.qty * 12345), avg(o.amount * 3) filter (where o.qty > 0), avg(-o.amount) from fedp.orders o join fedq.customers c on c.id = o.customer_id',
  'select avg(o.qty) from fedp.orders o join fedq.customers c on c.id = o.customer_id where o.id > 100',
  'select o.id, rank() over (partition by c.region order by o.amount desc) as r, dense_rank() over (order by c.vip) as d, sum(o.qty) over (partition by c.region) as region_qty, count(*) over () as n, max(o.amount) over (order by o.id) as running from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select o.id, extract(year from o.shipped) as y, extract(quarter from o.at), date_part(\'month\', o.at) as m, round(o.amount, 1) as r1, round(o.amount) as r0, round(o.amount * 7, -1) from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select o.id, o.amount / 3 as third, o.amount / o.qty as unit, o.qty / 2.5, -o.amount / 7 as neg, 1 / o.amount from fedp.orders o join fedq.customers c on c.id = o.customer_id where o.qty <> 0 and o.amount <> 0 order by o.id',
  'select c.region, sum(o.amount) / count(*) as mean, sum(o.amount * 1000) / 7 from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by c.region',
  'select lower(c.name) as l, upper(o.note) as u, concat(c.name, \'-\', o.amount, o.qty, o.shipped, null) as label from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select c.name, c.seen, o.at from fedp.orders o join fedq.customers c on c.id = o.customer_id where c.seen > \'2024-01-01 08:00:00+00\' order by c.seen desc, o.id',
  'select max(c.seen) as last_seen, min(o.at) as first_at, count(*) filter (where c.seen < o.at) as later from fedp.orders o join fedq.customers c on c.id = o.customer_id',
  'select greatest(o.qty, c.id) as g, least(o.qty, c.id) as l, nullif(o.qty, 1) as n, abs(o.qty) as a from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select date_trunc(\'month\', o.at) as month, date_trunc(\'week\', o.at) as week, date_trunc(\'Quarter\', o.at), date_trunc(\'hour\', o.at) as hour, c.region, count(*) as n from fedp.orders o join fedq.customers c on c.id = o.customer_id group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5',
  'select o.id, o.at + interval \'1 month\' as next_month, o.at - interval \'2 days 3 hours\' as before, o.shipped + interval \'1 week\' as week, interval \'90 minutes\' + o.at as later, o.shipped - interval \'1 year -2 mons\' from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  'select o.id from fedp.orders o join fedq.customers c on c.id = o.customer_id where o.at > timestamp \'2024-02-01 00:00:00\' - interval \'30 days\' order by 1',
  // a timestamptz (and a date, read as one) truncated and moved in UTC, the sessions' time zone in both
  'select o.id, date_trunc(\'month\', c.seen) as month, date_trunc(\'week\', o.shipped) as week, c.seen + interval \'1 day\' as next_day, c.seen - interval \'1 month\' as month_before from fedp.orders o join fedq.customers c on c.id = o.customer_id order by o.id',
  // an avg or a numeric division of a subquery or CTE, passed on to the output as it is (a semantic query's shape)
  'with g as (select c.region, avg(o.amount) as mean, avg(o.qty) as qty, sum(o.amount) / count(*) as ratio from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region) select g.region, g.mean, g.qty, g.ratio from g order by g.region',
  'select s.* from (select c.vip, avg(o.amount * 3) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.vip) s order by s.vip',
  'select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region union all select c.name, avg(o.amount) from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.name order by 1',
];

/** Statements the plan refuses, with the construct it names. */
const REFUSED: readonly [string, string][] = [
  ['select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region order by mean', 'ORDER BY an avg'],
  ['select c.region from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region having avg(o.qty) > 1', 'function avg'],
  ['select o.id from fedp.orders o join fedq.customers c on c.id = o.customer_id where o.amount / 3 > 1', 'numeric division'],
  ['select date_trunc(\'century\', o.at) from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'date_trunc other than'],
  ['select o.at + interval \'1.5 hours\' from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'an interval other than a constant'],
  ['select o.at + interval \'01:30:00\' from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'an interval other than a constant'],
  ['select interval \'1 day\' from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'a cast to pg_catalog.interval'],
  // operands are not their quotient: a subquery's avg compared, sorted, grouped or deduplicated is refused
  ['select s.region from (select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region) s where s.mean > 1', 'avg or a numeric division of a subquery'],
  ['select s.mean + 1 from (select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region) s', 'avg or a numeric division of a subquery'],
  ['select s.region, s.mean from (select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region) s order by s.mean', 'avg or a numeric division of a subquery'],
  ['select distinct s.mean from (select c.region, avg(o.qty) as mean from fedp.orders o join fedq.customers c on c.id = o.customer_id group by c.region) s', 'DISTINCT over avg'],
  ['select avg(o.qty) from fedp.orders o join fedq.customers c on c.id = o.customer_id union select avg(o.amount) from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'UNION over avg'],
  ['select concat(c.vip, o.note) from fedp.orders o join fedq.customers c on c.id = o.customer_id', 'concat of a value'],
  ['select c.name from fedp.orders o join fedq.customers c on c.id = o.customer_id where c.name similar to \'a%\'', 'SIMILAR TO'],
];

type Rows = Record<string, unknown>[];

const MEMORY_LIMIT = '16MB';
const BIG_ROWS = 300_000;
/** Rows of `fedq.fan`: about 550 kB, over a fetch's share of the transit budget at MEMORY_LIMIT (250 kB). */
const FAN_ROWS = 5_000;

/** The rows, each numeric value in its canonical decimal form. */
function canonical(result: pg.QueryResult): Rows {
  const numeric = new Set(result.fields.filter((field) => field.dataTypeID === NUMERIC_OID).map((field) => field.name));
  return (result.rows as Rows).map((row) => Object.fromEntries(Object.entries(row).map(([name, value]) => [
    name, numeric.has(name) && typeof value === 'string' ? canonicalDecimal(value) : value,
  ])));
}

const NUMERIC_OID = 1700;

const test = suite<{ pglite: Datasource; server: Datasource; service: TestService; door: pg.Client; oracle: Datasource }>(
  'federation: PGlite + PostgreSQL answer as one PostgreSQL would',
);

if (!skippedHere(test, postgres)) {
  test.before(async (context) => {
    context.pglite = await sharedPglite();
    context.server = await postgres.open('crm_pg');
    context.oracle = context.server;
    for (const statement of ['drop schema if exists fedp cascade', 'create schema fedp', ...statements(ORDERS, 'fedp', '')]) await context.pglite.query(statement, []);
    const server = [
      'drop schema if exists fedq cascade', 'drop schema if exists fedo cascade', 'create schema fedq', 'create schema fedo',
      ...statements(CUSTOMERS, 'fedq', ''), ...statements(ORDERS, 'fedo', 'collate "C"'), ...statements(CUSTOMERS, 'fedo', 'collate "C"'),
      // about 35 MB of rows: more than the engine's memory limit of this suite
      `create view fedq.big as select g as n, repeat('x', 100) || g as pad from generate_series(1, ${BIG_ROWS}) g`,
      // many rows per key: a dependent read of a few keys larger than a fetch's share of the transit budget
      `create view fedq.fan as select g % 7 + 1 as k, repeat('y', 100) || g as pad from generate_series(1, ${FAN_ROWS}) g`,
    ];
    for (const statement of server) await context.server.query(statement, []);
    const vdb = `name: fedp
version: "1"
datasource: retail_db
schemas:
  - { name: fedp, datasource: retail_db }
  - { name: fedq, datasource: crm_pg }
`;
    const config = {
      ...demoConfig({ descriptors: './bundle', sql: { enabled: true, port: 0 } }),
      datasources: { retail_db: { adapter: 'pglite' }, crm_pg: postgres.datasourceConfig },
      // shipping as configured by default: where it applies, it answers as the engine would, within the same bounds
      federation: { memoryLimit: MEMORY_LIMIT },
    };
    context.service = await startTestService({ config, files: { 'bundle/vdbs/fedp.yaml': vdb }, datasources: { retail_db: context.pglite, crm_pg: context.server } });
    context.door = pgClient({ port: (context.service.sqlAddress as { port: number }).port, database: 'fedp@1' }, ADMIN_TOKEN);
    await context.door.connect();
  });

  test.after(async ({ pglite, server, service, door }) => {
    await door?.end();
    await service?.close();
    await pglite?.query('drop schema if exists fedp cascade', []);
    if (server) {
      for (const statement of ['drop schema if exists fedq cascade', 'drop schema if exists fedo cascade']) await server.query(statement, []);
      await server.close();
    }
  });

  test(`${CORPUS.length} statements answer the oracle's rows, names and types`, async ({ door, oracle }) => {
    const direct = (await import('pg')).default;
    const client = new direct.Client({ connectionString: postgres.url });
    await client.connect();
    try {
      for (const statement of CORPUS) {
        const expected = await client.query(statement.replaceAll('fedp.', 'fedo.').replaceAll('fedq.', 'fedo.'));
        let actual: pg.QueryResult;
        try {
          actual = await door.query(statement);
        } catch (error) {
          throw new Error(`${statement}: ${(error as Error).message}`);
        }
        assert.equal(actual.fields.map((field) => field.name), expected.fields.map((field) => field.name), statement);
        // numeric values are encoded without trailing fractional zeros by every datasource not forwarded (docs/logical-types.md)
        assert.equal(canonical(actual), canonical(expected), statement);
        assert.equal(actual.fields.map((field) => field.dataTypeID), expected.fields.map((field) => field.dataTypeID), `types of ${statement}`);
      }
    } finally {
      await client.end();
    }
    assert.ok(oracle);
  });

  test('constructs the plan cannot evaluate as PostgreSQL would are refused, naming them', async ({ door }) => {
    for (const [statement, construct] of REFUSED) {
      const error = await door.query(statement).then(() => undefined, (failure: Error & { code?: string }) => failure);
      assert.is(error?.code, '0A000', statement);
      assert.match(String(error?.message), construct, statement);
    }
  });

  test('a plan needing more than federation.memoryLimit fails with the limit (54000 at the SQL door, 422 result_too_large elsewhere); the next statement is served', async ({ door }) => {
    const error = await door.query('select count(distinct b.pad) from fedq.big b join fedp.orders o on o.id = b.n')
      .then(() => undefined, (failure: Error & { code?: string; detail?: string }) => failure);
    assert.is(error?.code, '54000');
    assert.match(String(error?.message), `more memory than ${MEMORY_LIMIT} (federation.memoryLimit)`);
    assert.is(error?.detail, 'code: result_too_large');
    const next = await door.query('select count(*) as n from fedp.orders o join fedq.customers c on c.id = o.customer_id');
    assert.equal(next.rows, [{ n: '6' }]);
  });

  test('a dependent read without a cursor that is more than a fetch\'s share of the transit budget is read again by a cursor: answered, not refused', async ({ door }) => {
    const result = await door.query('select count(*) as n, count(distinct f.pad) as pads from fedp.orders o join fedq.fan f on f.k = o.id where o.id <= 7');
    assert.equal(result.rows, [{ n: String(FAN_ROWS), pads: String(FAN_ROWS) }]);
  });

  test('a division by zero fails as on PostgreSQL (22012), where the engine alone would answer NULL', async ({ door }) => {
    for (const statement of [
      'select o.qty / (c.id - 1) from fedp.orders o join fedq.customers c on c.id = o.customer_id',
      'select o.amount / (c.id - 1) from fedp.orders o join fedq.customers c on c.id = o.customer_id',
    ]) {
      const error = await door.query(statement).then(() => undefined, (failure: Error & { code?: string }) => failure);
      assert.is(error?.code, '22012', statement);
    }
  });
}

test.run();
