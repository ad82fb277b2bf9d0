// test-lane: postgres-server
/**
 * Federated statements, shipped (docs/federation.md#shipping-the-small-side) and answered by the engine,
 * through the clients people use rather than node-postgres: pgjdbc (a statement run past prepareThreshold,
 * so named server statements and binary results; setInt, setObject with Integer, BigDecimal and LocalDate,
 * setString, setTimestamp), psycopg 3 (server-side binding, binary parameters, a named cursor), pandas'
 * read_sql with parameters, MCP's run_sql and a query definition of the HTTP route. Each client's answer is
 * compared with the same client's answer from one PostgreSQL database (collation "C") holding both schemas,
 * and the metric says whether shipping answered.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BACKENDS, skippedHere, type Backend } from '../../support/backends.js';
import { mcpClient } from '../../support/mcp-service.js';
import { jdbc, jdbcMissing, pythonClient, pythonModulesMissing, SQLALCHEMY2_PATH, sqlAlchemy2Missing, type DoorTarget } from '../../support/sql-clients.js';
import { ANALYST_TOKEN, demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { serverOracle, type Oracle, type TextAnswer } from './corpus-oracle.js';
import { shopSetup, shopVdb } from './shop-data.js';
import { openShopDatabases, shippedCount, type ShopDatabases } from './shop-databases.js';

const postgres = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;

const VDB = shopVdb('fedh3');

/** One customer's orders: the customer by its key, the orders by its key on the other database: shipped. */
const ONE_CUSTOMER = 'select o.id, o.total, o.ordered_at, c.name, c.credit from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = $1 order by o.id';

/** The query definitions of the HTTP route: `{{ name }}` a bound value of the request's body. */
const ONE_CUSTOMER_QUERY = 'select o.id, o.total, o.total >= {{ least }} as big, c.name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = {{ customer }} order by o.id';
const OVER_CREDIT_QUERY = 'select c.id, o.id as order_id, c.credit from fed_crm.customers c left join fed_shop.orders o on o.customer_id = c.id where c.credit > {{ credit }} order by c.id, o.id';
const QUERIES = {
  'bundle/queries/h3_one_customer.yaml': `---\ntype: sqlDirect\nvirtualDatabase: fedh3\nneededFields: [customer, least]\nquery: >-\n  ${ONE_CUSTOMER_QUERY}\n`,
  'bundle/queries/h3_over_credit.yaml': `---\ntype: sqlDirect\nvirtualDatabase: fedh3\nneededFields: [credit]\nquery: >-\n  ${OVER_CREDIT_QUERY}\n`,
};

interface Context {
  databases: ShopDatabases;
  service: TestService;
  door: DoorTarget;
  oracle: Oracle;
  /** The oracle's database on the server, for a client to connect to as the server's own user. */
  oracleTarget: DoorTarget;
  oracleUser: string;
  oraclePassword: string;
}

/** A decimal in its canonical form: the door sends `50` for PostgreSQL's `50.00` (docs/sql.md#types). */
const canonicalText = (value: string) => (/^-?\d+\.\d+$/.test(value) ? value.replace(/\.?0+$/, '') : value);
const canonicalLine = (line: string) => line.split('|').map(canonicalText).join('|');
const canonicalValue = (value: unknown): unknown => (typeof value === 'string' ? canonicalText(value) : Array.isArray(value) ? value.map(canonicalValue) : value);

/** Rows of the HTTP route or MCP (objects, JSON values) as the oracle's text rows, decimals canonical. */
const textRows = (rows: readonly Record<string, unknown>[]) => rows.map((row) => Object.values(row).map((value) => (value === null ? null : canonicalText(String(value)))));

/** The oracle's rows as `textRows` has them: booleans (type 16) as JSON writes them, decimals canonical. */
const oracleRows = ({ types, rows }: TextAnswer) => rows.map((row) => row.map((value, index) => (value === null ? null : types[index] === 16 ? String(value === 't') : canonicalText(value))));

const callTool = async (client: Client, args: Record<string, unknown>) => (await client.callTool({ name: 'run_sql', arguments: { vdb: 'fedh3', version: '1', ...args } })) as CallToolResult;

const test = suite<Context>('federation: shipped and engine-answered statements through JDBC, psycopg, pandas, MCP and the query route');

if (!skippedHere(test, postgres)) {
  const url = postgres.url ?? '';
  test.before(async (context) => {
    context.databases = await openShopDatabases(postgres, 'fed_h3');
    context.oracle = await serverOracle(url, [...shopSetup('postgres', 'fed_crm'), ...shopSetup('postgres', 'fed_shop')], 'fed_h3_oracle');
    const server = new URL(url);
    context.oracleTarget = { port: Number(server.port || 5432), database: 'fed_h3_oracle' };
    context.oracleUser = decodeURIComponent(server.username);
    context.oraclePassword = decodeURIComponent(server.password);
    context.service = await startTestService({
      config: demoConfig({
        descriptors: './bundle', sql: { enabled: true, port: 0 }, mcp: { enabled: true }, server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 15_000 },
        datasources: context.databases.config,
        federation: { shipMaxRows: 8 },
      }),
      files: { 'bundle/vdbs/fedh3.yaml': VDB, ...QUERIES },
      datasources: { crm_db: context.databases.crm, shop_db: context.databases.shop },
    });
    context.door = { port: (context.service.sqlAddress as { port: number }).port, database: 'fedh3@1' };
  });

  test.after(async ({ service, databases, oracle }) => {
    await service?.close();
    await databases?.release(service);
    await oracle?.close();
  });

  /**
   * The statements JDBC runs, each with 12 or more runs of changing values; `shipped`: whether shipping answers
   * each run, or how many of them do.
   */
  const JDBC_CASES: { name: string; sql: string; runs: string[]; shipped: boolean | number }[] = [
    {
      name: 'one customer\'s orders by setInt, setObject(Integer) and setNull, past prepareThreshold',
      sql: ONE_CUSTOMER.replace('$1', '?'),
      runs: [...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 99].map((id, run) => `${run % 2 === 0 ? 'i' : 'I'}:${id}`), 'null:', 'i:4'],
      // a NULL key is not pushed (a plan per the values' types, plan-cache.ts): the customers are then no key's few rows, and the engine answers that run
      shipped: 13,
    },
    {
      name: 'a customer\'s orders with a timestamp, a BigDecimal and a string compared in the select list',
      sql: 'select o.id, o.ordered_at < ? as early, o.total >= ? as big, c.name < ? as before_name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = ? order by o.id',
      runs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13].map((id, run) => `t:2024-02-${String(10 + run).padStart(2, '0')} 12:30:00;n:${run * 10}.5${run};s:${['ada', 'Ada', 'Chloé', 'ada ', 'Émile', 'b'][run % 6]};i:${id}`),
      shipped: true,
    },
    {
      name: 'customers of a tier over a credit (BigDecimal) and created from a day (LocalDate): their orders counted',
      sql: 'select c.id, c.name, count(o.id) as orders, sum(o.total) as total from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id where c.tier = ? and c.credit > ? and c.created_at >= ? group by c.id, c.name order by c.id',
      runs: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].map((tier, run) => `i:${tier};n:${run % 3 === 0 ? '-100' : '10.005'};d:2024-0${1 + (run % 3)}-0${1 + (run % 5)}`),
      shipped: true,
    },
    {
      name: 'a tier\'s customers\' orders from a time (setTimestamp), a name left out (setString)',
      sql: 'select o.id, c.name, o.total from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.tier = ? and o.ordered_at >= ? and c.name <> ? order by o.id',
      runs: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].map((tier, run) => `i:${tier};t:2024-02-${String(1 + run * 2).padStart(2, '0')} 0${run % 10}:00:00;s:${run % 2 === 0 ? 'ada' : 'Ben'}`),
      shipped: true,
    },
    {
      name: 'customers over a credit (BigDecimal): at least 10 of them, more than federation.shipMaxRows (8), so the engine answers',
      sql: 'select c.id, o.id as order_id, o.total - c.credit as diff from fed_crm.customers c left join fed_shop.orders o on o.customer_id = c.id where c.credit > ? order by c.id, o.id',
      runs: ['-100', '0', '5.549', '5.55', '-0.01', '1', '2.5', '0.001', '-20.25', '3', '-3000000000', '5'].map((credit) => `n:${credit}`),
      shipped: false,
    },
    {
      name: 'orders from a time (setTimestamp) and customers from a day (LocalDate): more customers than federation.shipMaxRows, so the engine answers',
      sql: 'select c.id, o.id as order_id, o.ordered_at from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id where c.created_at >= ? and o.ordered_at >= ? order by c.id, o.id',
      runs: Array.from({ length: 12 }, (_, run) => `d:2024-01-0${1 + (run % 3)};t:2024-02-${String(1 + run * 2).padStart(2, '0')} ${String(run * 2).padStart(2, '0')}:30:00`),
      shipped: false,
    },
  ];

  const missingJdbc = jdbcMissing();
  for (const { name, sql, runs, shipped } of JDBC_CASES) {
    (missingJdbc ? test.skip : test)(`JDBC: ${name}: each run as one PostgreSQL answers it${shipped === false ? '' : ', by shipping'}${missingJdbc ? ` (${missingJdbc})` : ''}`, async (context) => {
      const step = `runs:${sql}|${runs.join('|')}`;
      const before = await shippedCount(context.service);
      const lines = await jdbc(context.door, ANALYST_TOKEN, [step]);
      const after = await shippedCount(context.service);
      const expected = await jdbc(context.oracleTarget, context.oraclePassword, [step], context.oracleUser);
      assert.ok(expected.length > runs.length, `the oracle answers rows: ${expected.join('\n')}`);
      assert.equal(lines.map(canonicalLine), expected.map(canonicalLine));
      assert.is(after - before, shipped === true ? runs.length : shipped === false ? 0 : shipped, 'runs answered by shipping');
    });
  }

  /** The statements the Python clients run, `%s` per value; a typed value is `{decimal|date|timestamp: text}`. */
  const PYTHON_CASES: { name: string; sql: string; runs: unknown[][]; shipped: boolean }[] = [
    {
      name: 'a customer\'s orders with a timestamp, a Decimal and a string in the select list',
      sql: 'select o.id, o.ordered_at, o.total, o.ordered_at < %s as early, o.total >= %s as big, c.name < %s as before_name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = %s order by o.id',
      runs: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13].map((id, run) => [{ timestamp: `2024-02-${String(10 + run).padStart(2, '0')} 12:30:00` }, { decimal: `${run * 10}.5` }, ['ada', 'Ada', 'Chloé', 'ada ', 'Émile', 'b'][run % 6], id]),
      shipped: true,
    },
    {
      name: 'customers of a tier created from a day (a date) over a credit (a Decimal): their orders counted',
      sql: 'select c.id, c.name, count(o.id) as orders, sum(o.total) as total from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id where c.tier = %s and c.credit > %s and c.created_at >= %s group by c.id, c.name order by c.id',
      runs: [1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3].map((tier, run) => [tier, { decimal: run % 3 === 0 ? '-100' : '10.005' }, { date: `2024-0${1 + (run % 3)}-0${1 + (run % 5)}` }]),
      shipped: true,
    },
    {
      name: 'customers over a credit (a Decimal): more than federation.shipMaxRows, so the engine answers',
      sql: 'select c.id, o.id as order_id, o.total - c.credit as diff from fed_crm.customers c left join fed_shop.orders o on o.customer_id = c.id where c.credit > %s order by c.id, o.id',
      // pandas over psycopg2 writes each value into the text: a negative one is a negative constant
      runs: ['-100', '0', '5.549', '5.55', '-0.01', '1', '2.5', '0.001', '-20.25', '3', '-3000000000', '5'].map((credit) => [{ decimal: credit }]),
      shipped: false,
    },
  ];

  /** Each Python client: its step, how many times it runs each run (psycopg: text, binary, named), why it cannot run here. */
  const PYTHON_CLIENTS = [
    { step: 'psycopg3-runs', ways: 3, missing: pythonModulesMissing('psycopg'), pythonPath: undefined },
    { step: 'sqlalchemy2-runs', ways: 1, missing: sqlAlchemy2Missing() ?? pythonModulesMissing('psycopg'), pythonPath: SQLALCHEMY2_PATH },
    { step: 'pandas-runs', ways: 1, missing: pythonModulesMissing('pandas', 'sqlalchemy', 'psycopg2'), pythonPath: undefined },
  ];

  for (const client of PYTHON_CLIENTS) {
    for (const { name, sql, runs, shipped } of PYTHON_CASES) {
      (client.missing ? test.skip : test)(`${client.step}: ${name}: each run as one PostgreSQL answers it${shipped ? ', by shipping' : ''}${client.missing ? ` (${client.missing})` : ''}`, async (context) => {
        const args = [sql, JSON.stringify(runs)];
        const before = await shippedCount(context.service);
        const answers = await pythonClient(context.door, ANALYST_TOKEN, client.step, args, 'tester', client.pythonPath);
        const after = await shippedCount(context.service);
        const expected = await pythonClient(context.oracleTarget, context.oraclePassword, client.step, args, context.oracleUser, client.pythonPath);
        assert.is(expected.length, runs.length * client.ways);
        assert.ok(expected.some((answer) => JSON.stringify(answer).length > 20), 'the oracle answers rows');
        assert.equal(canonicalValue(answers), canonicalValue(expected));
        assert.is(after - before, shipped ? runs.length * client.ways : 0, 'runs answered by shipping');
      });
    }
  }

  const perform = async (context: Context, name: string, body: Record<string, unknown>, query = '') => {
    const response = await context.service.request(`/api/v1/query/perform/${name}${query}`, {
      method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test('the query route: a federated definition\'s bound values (JSON numbers, a decimal as a string), shipped, each answer as one PostgreSQL\'s', async (context) => {
    for (const [customer, least] of [[1, 0], [2, '19.99'], [3, 19.99], [5, '50.0'], [6, 0.5], [7, '-1'], [99, 0]] as const) {
      const before = await shippedCount(context.service);
      const reply = await perform(context, 'h3_one_customer', { customer, least });
      assert.is(reply.status, 200, JSON.stringify(reply.body));
      assert.is(await shippedCount(context.service) - before, 1, `customer ${customer}: answered by shipping`);
      const expected = await context.oracle.run(ONE_CUSTOMER_QUERY.replace('{{ customer }}', String(customer)).replace('{{ least }}', String(least)));
      assert.equal(textRows(reply.body['rows'] as Record<string, unknown>[]), oracleRows(expected));
    }
  });

  test('the query route: ?explain=true shows the shipping (the customers sent to the shop) and runs nothing; more rows than shipMaxRows, the engine answers', async (context) => {
    const before = await shippedCount(context.service);
    const explained = await perform(context, 'h3_one_customer', { customer: 4, least: 0 }, '?explain=true');
    assert.is(explained.status, 200, JSON.stringify(explained.body));
    const shipping = explained.body['shipping'] as { datasource: string; sql: string; shipped: string[] } | undefined;
    assert.equal([shipping?.datasource, shipping?.shipped], ['shop_db', ['crm_db: fed_crm.customers']]);
    assert.match(String(shipping?.sql), /join \(SELECT \* FROM unnest\(/);
    const over = await perform(context, 'h3_over_credit', { credit: 0 });
    assert.is(over.status, 200, JSON.stringify(over.body));
    assert.is(await shippedCount(context.service), before, 'nothing shipped: explain ran nothing, and the engine answered the rest');
    const expected = await context.oracle.run(OVER_CREDIT_QUERY.replace('{{ credit }}', '0'));
    assert.ok(expected.rows.length > 8);
    assert.equal(textRows(over.body['rows'] as Record<string, unknown>[]), oracleRows(expected));
  });

  test('MCP run_sql: a federated statement with $n params (a number, a decimal string), shipped or answered by the engine, as one PostgreSQL answers it', async (context) => {
    const analyst = await mcpClient(context.service, ANALYST_TOKEN);
    try {
      const sql = 'select o.id, o.total, o.total >= $2 as big, c.name from fed_shop.orders o join fed_crm.customers c on c.id = o.customer_id where c.id = $1 order by o.id';
      for (const [customer, least] of [[1, 0], [2, '19.99'], [8, 1.5], [13, '0']] as const) {
        const before = await shippedCount(context.service);
        const result = await callTool(analyst, { sql, params: [customer, least] });
        assert.is(result.isError, undefined, JSON.stringify(result.content));
        assert.is(await shippedCount(context.service) - before, 1, `customer ${customer}: answered by shipping`);
        const expected = await context.oracle.run(sql.replace('$1', String(customer)).replace('$2', String(least)));
        assert.equal(textRows((result.structuredContent as { rows: Record<string, unknown>[] }).rows), oracleRows(expected));
      }
      const before = await shippedCount(context.service);
      const engine = await callTool(analyst, { sql: OVER_CREDIT_QUERY.replace('{{ credit }}', '$1'), params: ['5.54'] });
      assert.is(engine.isError, undefined, JSON.stringify(engine.content));
      assert.is(await shippedCount(context.service), before, 'answered by the engine');
      const expected = await context.oracle.run(OVER_CREDIT_QUERY.replace('{{ credit }}', '5.54'));
      assert.equal(textRows((engine.structuredContent as { rows: Record<string, unknown>[] }).rows), oracleRows(expected));
      // a JSON number beside integers in an expression across both sides is an integer in PostgreSQL: 6.5 is none (22P02)
      const across = 'select c.id, o.id as order_id from fed_crm.customers c join fed_shop.orders o on o.customer_id = c.id where c.tier + o.id > $1';
      const fraction = await callTool(analyst, { sql: across, params: [6.5] });
      assert.is(fraction.isError, true, JSON.stringify(fraction.structuredContent));
      assert.match(JSON.stringify(fraction.content), '(22P02)');
      const whole = await callTool(analyst, { sql: across, params: [6] });
      assert.equal(textRows((whole.structuredContent as { rows: Record<string, unknown>[] }).rows).sort(), oracleRows(await context.oracle.run(across.replace('$1', '6'))).sort());
    } finally {
      await analyst.close();
    }
  });
}

test.run();
