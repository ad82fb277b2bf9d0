// test-lane: postgres-server
/**
 * Shipping the small side (docs/federation.md#shipping-the-small-side) through the real service, over two
 * databases of the PostgreSQL server: the rows read from one are sent to the other as bound arrays, which
 * answers the statement as the caller; the engine answers where they are more than
 * `federation.shipMaxRows`, or where the receiving database would compare or classify text otherwise than
 * collation "C". Every answer is compared with the same statement on one database (collation "C") holding
 * both schemas.
 */
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { serverOracle, TEXT_PARSERS, type Oracle } from './corpus-oracle.js';
import { shopSetup, shopVdb } from './shop-data.js';
import { cancelledWhenClientGoes, openShopDatabases, shippedCount, type ShopDatabases } from './shop-databases.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;

const VDB = shopVdb('fedship');

/** Beside the corpus's shop: who runs a statement on each side, a slow view, and names in a collation of their own. */
const EXTRA = {
  crm: ['create view fed_crm.whoami as select 1 as k, current_user::text as crm_who'],
  shop: [
    'create view fed_shop.whoami as select 1 as k, current_user::text as shop_who',
    'create view fed_shop.slow as select 1 as x from pg_sleep(20)',
    `create table fed_shop.labels (customer_id integer, label text collate "und-x-icu")`,
    `insert into fed_shop.labels values (1, 'b'), (2, 'B'), (3, 'a'), (4, 'A'), (7, 'é')`,
  ],
};
const SHIP_MAX_ROWS = 8;
const MAX_SOURCE_ROWS = 40;

interface Plan {
  shipping?: { datasource: string; sql: string; shipped: string[] };
}

interface Context {
  databases: ShopDatabases;
  service: TestService;
  door: pg.Client;
  oracle: Oracle;
}

/** Decimals in their canonical form: the door sends `50` for PostgreSQL's `50.00` (docs/sql.md#types). */
const canonical = (rows: readonly (readonly unknown[])[]) => rows.map((row) => row.map((value) => (typeof value === 'string' && /^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value)));

/** The door's answer to `sql` (values as text), whether shipping answered it, and the oracle's answer. */
async function asked(context: Context, sql: string, values: unknown[] = [], withOracle = values.length === 0): Promise<{ rows: unknown[][]; shipped: boolean; expected: unknown[][] }> {
  const before = await shippedCount(context.service);
  const result = await context.door.query({ text: sql, values, rowMode: 'array' });
  const shipped = await shippedCount(context.service) > before;
  const oracle = withOracle ? await context.oracle.run(sql) : undefined;
  return { rows: canonical(result.rows as unknown[][]), shipped, expected: canonical(oracle?.rows ?? []) };
}


const test = suite<Context>('federation: shipping the small side (two PostgreSQL databases)');

if (!skippedHere(test, postgres)) {
  const url = postgres.url ?? '';
  test.before(async (context) => {
    context.databases = await openShopDatabases(postgres, 'fed_ship', EXTRA);
    context.oracle = await serverOracle(url, [...shopSetup('postgres', 'fed_crm'), ...shopSetup('postgres', 'fed_shop'), 'create table fed_shop.labels (customer_id integer, label text)', EXTRA.shop[3] as string], 'fed_ship_oracle');
    context.service = await startTestService({
      config: demoConfig({
        descriptors: './bundle', sql: { enabled: true, port: 0 }, server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 15_000 },
        datasources: context.databases.config,
        federation: { shipMaxRows: SHIP_MAX_ROWS, maxSourceRows: MAX_SOURCE_ROWS },
      }),
      files: {
        'bundle/vdbs/fedship.yaml': VDB,
        'bundle/queries/ship_slow.yaml': '---\ntype: sqlDirect\nvirtualDatabase: fedship\nquery: select s.x, c.name from fed_shop.slow s join fed_crm.customers c on c.id = s.x where c.id = 1\n',
      },
      datasources: { crm_db: context.databases.crm, shop_db: context.databases.shop },
    });
    const { port } = context.service.sqlAddress as { port: number };
    context.door = new pg.Client({ host: '127.0.0.1', port, database: 'fedship@1', user: 'tester', password: ANALYST_TOKEN, types: TEXT_PARSERS });
    await context.door.connect();
  });

  test.after(async ({ door, service, databases, oracle }) => {
    await door?.end();
    await service?.close();
    await databases?.release(service);
    await oracle?.close();
  });

  test('explain names the receiving source and its statement: the customers sent as one bound array per column read', async ({ door }) => {
    const result = await door.query(`explain select o.id, c.name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.email = 'ben@x.org'`);
    const plan = JSON.parse(String(result.rows[0]?.['QUERY PLAN'])) as Plan;
    assert.is(plan.shipping?.datasource, 'shop_db');
    assert.equal(plan.shipping?.shipped, ['crm_db: fed_crm.customers']);
    assert.match(String(plan.shipping?.sql), /join \(SELECT \* FROM unnest\(\?::integer\[\], \?::character varying\(40\)\[\], \?::character varying\(80\)\[\]\) AS vdb_shipped\("id", "name", "email"\)\) c on/);
  });

  test('a selective join is answered by the receiving source, as the oracle answers it', async (context) => {
    const answer = await asked(context, `select o.id, o.total, c.name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.email = 'ben@x.org' order by o.id`);
    assert.ok(answer.shipped, 'answered by shipping');
    assert.ok(answer.rows.length > 0);
    assert.equal(answer.rows, answer.expected);
  });

  test('bound values keep their places around the sent arrays; a `?` in a literal, a comment and a name stays a character', async (context) => {
    const sql = `select o.id, c.name, '?' as mark /* is it? */, 'é?' as accent from fed_crm.customers c -- who?
      join fed_shop.orders o on o.customer_id = c.id where c.tier = $1 and c.id > $2 and c.name <> $3 order by o.id`;
    const answer = await asked(context, sql, [2, 3, 'nobody?']);
    assert.ok(answer.shipped, 'answered by shipping');
    const expected = await context.oracle.run(sql.replace('$1', '2').replace('$2', '3').replace('$3', `'nobody?'`));
    assert.equal(answer.rows, canonical(expected.rows));
    assert.ok(answer.rows.every((row) => row[2] === '?' && row[3] === 'é?'));
  });

  test('a relation named twice, without an alias, and quoted is sent once, under the names the statement reads', async (context) => {
    const sql = `select "regions".code, (select count(*) from fed_crm.regions other where other.name < "regions".name) as before, count(o.id) as orders
      from "fed_crm"."regions" join fed_shop.orders o on o.ship_region = "regions".code group by "regions".code, "regions".name order by 1`;
    const answer = await asked(context, sql);
    assert.ok(answer.shipped, 'answered by shipping');
    assert.equal(answer.rows, answer.expected);
  });

  test('each statement runs as the caller\'s database role: the read on the sending source and the answer on the receiving one', async (context) => {
    // a relation of the same name in each schema is two relations: the predicate on one is pushed to its source
    const sql = 'select s.shop_who, c.crm_who from fed_shop.whoami s join fed_crm.whoami c on c.k = s.k where c.k = 1';
    const plan = JSON.parse(String((await context.door.query(`explain ${sql}`)).rows[0]?.['QUERY PLAN'])) as { sources: { datasource: string; sql: string }[] };
    assert.match(String(plan.sources.find((source) => source.datasource === 'crm_db')?.sql), /FROM "fed_crm"\."whoami" WHERE "k" = \?$/);
    const answer = await asked(context, sql, [], false);
    assert.ok(answer.shipped, 'answered by shipping');
    assert.equal(answer.rows, [['vdb_fedship_v1_analyst', 'vdb_fedship_v1_analyst']]);
  });

  test(`the receiving statement's rows count as read from its source: more than federation.maxSourceRows (${MAX_SOURCE_ROWS}) is 422 naming it, as the engine's plan would be`, async (context) => {
    const sql = `select o.id, l.line_no from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id join fed_shop.order_lines l on l.order_id = o.id
      where c.tier is not null order by 1, 2`;
    const expected = await context.oracle.run(sql);
    assert.ok(expected.rows.length > MAX_SOURCE_ROWS, `${expected.rows.length} rows`);
    const error = await context.door.query(sql).then(() => undefined, (failure: Error & { code?: string; detail?: string }) => failure);
    assert.is(error?.code, '54000', String(error?.message));
    assert.match(String(error?.message), 'datasource shop_db');
    assert.match(String(error?.message), `more than ${MAX_SOURCE_ROWS} rows (federation.maxSourceRows)`);
    const one = await asked(context, `${sql.replace('where c.tier is not null', 'where c.id = 5')}`);
    assert.ok(one.shipped, 'the same statement over one customer is answered by shipping');
    assert.equal(one.rows, one.expected);
  });

  test('a receiving relation the engine\'s plan would read whole is not shipped to: the engine answers, within its bounds', async (context) => {
    const answer = await asked(context, 'select c.name, o.id from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = 5 and o.total > 10 order by o.id');
    assert.not.ok(answer.shipped, 'answered by the engine: the orders have a predicate of their own, so they are read with it, not with the customer\'s keys');
    assert.equal(answer.rows, answer.expected);
  });

  test(`more than federation.shipMaxRows (${SHIP_MAX_ROWS}) rows to send: the engine answers, the same rows`, async (context) => {
    const answer = await asked(context, 'select c.region, count(o.id) as orders from fed_crm.customers c left join fed_shop.orders o on o.customer_id = c.id group by c.region order by c.region nulls first');
    assert.not.ok(answer.shipped, 'answered by the engine');
    assert.equal(answer.rows, answer.expected);
  });

  test('a receiving column in a collation of its own (ICU): the engine answers, ordered by the bytes', async (context) => {
    const answer = await asked(context, `select l.label, c.id from fed_shop.labels l join fed_crm.customers c on c.id = l.customer_id where c.tier is not null order by l.label, c.id`);
    assert.not.ok(answer.shipped, 'answered by the engine');
    assert.equal(answer.rows, answer.expected);
    assert.equal(answer.rows.map((row) => row[0]), ['A', 'B', 'b', 'é']);
  });

  test('case mapping where the receiving database classifies characters otherwise than "C" answers as "C" does', async (context) => {
    const ctype = String((await context.databases.shop.query('select datctype from pg_database where datname = current_database()', [])).rows[0]?.['datctype']);
    const answer = await asked(context, `select c.id, upper(c.name) as shouted from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id where c.id in (7, 11) order by c.id, o.id`);
    assert.equal(answer.rows, answer.expected);
    if (ctype !== 'C' && ctype !== 'POSIX') assert.not.ok(answer.shipped, `datctype ${ctype}: answered by the engine`);
  });

  test('a client that goes away cancels the receiving statement on its server', async ({ databases, service }) => {
    await cancelledWhenClientGoes(databases.shop, service, 'ship_slow', " and query like '%vdb_shipped%'", 'the receiving statement runs');
  });

}

test.run();
