import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SemanticQuery } from '../../../core/plugin-api/semantic-query.js';
import { JoinPlanner } from '../../../core/semantic-query/join-planner.js';
import { ModelIndex } from '../../../core/semantic-query/model-index.js';
import { compileQuery } from '../../../core/semantic-query/query-compiler.js';
import { bindings } from '../../../core/semantic-query/sql-writer.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { demoConfig, startTestService } from '../../support/test-service.js';
import { seedStatements, shapesBundle, VDB } from './shapes-fixtures.js';

/**
 * The compiled SQL of SQL Server and Oracle, checked as text (no server runs here): the package is the
 * fixture model's, activated on PGlite, compiled with each family's dialect.
 */
const test = suite<{ model: ModelIndex; planner: JoinPlanner }>('semantic query SQL per dialect');
test.before(async (context) => {
  const raw = await sharedPglite();
  for (const statement of ['create schema if not exists semshapes_sql', ...seedStatements({ timestamp: 'timestamp' }, (table) => `semshapes_sql.${table}`)]) await raw.query(statement, []);
  const config = demoConfig({ descriptors: './bundle', datasources: { shapes_db: { adapter: 'pglite' } } });
  const files = shapesBundle('semshapes_sql', 'shapes_db');
  // No data roles: the text is what matters here.
  files['bundle/vdbs/shapes.yaml'] = (files['bundle/vdbs/shapes.yaml'] as string).replace(/dataRoles:[\s\S]*$/, '');
  const service = await startTestService({ config, files, datasources: { shapes_db: raw } });
  const pkg = service.container.resolve(coreTokens.semantic).packageOf(VDB, '1')?.document;
  await service.close();
  await raw.query('drop schema if exists semshapes_sql cascade', []);
  if (!pkg) throw new Error('the fixture model did not activate');
  context.model = new ModelIndex(pkg);
  context.planner = new JoinPlanner(context.model);
});

/** Two facts stitched on a shared dimension. (Field texts come from the package, compiled for PGlite: quoted "so".) */
const TWO_FACTS: SemanticQuery = {
  dimensions: [{ field: 'customers.region' }],
  measures: [{ metric: 'revenue' }, { metric: 'returned' }],
  where: "customers.region <> 'EAST'",
  orderBy: [{ field: 'region', direction: 'desc' }],
  limit: 10,
};
const BY_MONTH: SemanticQuery = { dimensions: [{ field: 'orders.ordered_at', grain: 'month', alias: 'month' }], measures: [{ metric: 'revenue' }], orderBy: [] };

test('SQL Server: DATEADD/DATEDIFF grains, a NULL-safe stitch without IS NOT DISTINCT FROM, NULL placement by CASE, OFFSET/FETCH', ({ model, planner }) => {
  const plan = compileQuery(model, planner, FAMILY_DIALECTS.mssql, TWO_FACTS);
  assert.match(plan.sql, /^WITH \[g0\] AS \(SELECT "customers"\."region" AS \[d0\], SUM\("orders"\."amount"\) AS \[m0\] FROM \[semshapes_sql\]\.\[orders\] \[orders\] LEFT JOIN /);
  assert.match(plan.sql, /, \[k\] AS \(SELECT \[d0\] FROM \[g0\] UNION SELECT \[d0\] FROM \[g1\]\)/);
  assert.match(plan.sql, /LEFT JOIN \[g0\] ON \(\[g0\]\.\[d0\] = \[k\]\.\[d0\] OR \(\[g0\]\.\[d0\] IS NULL AND \[k\]\.\[d0\] IS NULL\)\)/);
  assert.match(plan.sql, /ORDER BY CASE WHEN \[k\]\.\[d0\] IS NULL THEN 0 ELSE 1 END, \[k\]\.\[d0\] DESC OFFSET 0 ROWS FETCH NEXT \? ROWS ONLY$/);
  assert.equal(bindings(plan.params, TWO_FACTS), ['EAST', 'EAST', 10]);
  const month = compileQuery(model, planner, FAMILY_DIALECTS.mssql, BY_MONTH);
  assert.match(month.sql, /DATEADD\(month, DATEDIFF\(month, 0, "orders"\."ordered_at"\), 0\) AS \[d0\]/);
  const unordered = compileQuery(model, planner, FAMILY_DIALECTS.mssql, { dimensions: [], measures: [{ metric: 'revenue' }], orderBy: [], limit: 1 });
  assert.match(unordered.sql, /FROM \[g0\] ORDER BY \(SELECT NULL\) OFFSET 0 ROWS FETCH NEXT \? ROWS ONLY$/);
});

test('Oracle: TRUNC grains, DECODE for NULL-safe equality, no AS before a table alias, NULLS FIRST, FETCH NEXT', ({ model, planner }) => {
  const plan = compileQuery(model, planner, FAMILY_DIALECTS.oracle, TWO_FACTS);
  assert.match(plan.sql, /FROM "semshapes_sql"\."orders" "orders" LEFT JOIN "semshapes_sql"\."customers" "customers" ON "orders"\."customer_id" = "customers"\."id"/);
  assert.match(plan.sql, /LEFT JOIN "g1" ON DECODE\("g1"\."d0", "k"\."d0", 1, 0\) = 1/);
  assert.match(plan.sql, /ORDER BY "k"\."d0" DESC NULLS FIRST OFFSET 0 ROWS FETCH NEXT \? ROWS ONLY$/);
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.oracle, BY_MONTH).sql, /TRUNC\("orders"\."ordered_at", 'MM'\) AS "d0"/);
  const week = compileQuery(model, planner, FAMILY_DIALECTS.oracle, { ...BY_MONTH, dimensions: [{ field: 'orders.ordered_at', grain: 'week' }] });
  assert.match(week.sql, /TRUNC\("orders"\."ordered_at", 'IW'\)/);
});

test('a windowed field is read through a derived table of its dataset (no AS before its alias), a windowed metric over the grouped rows (§6.10)', ({ model, planner }) => {
  const firstOrders: SemanticQuery = { dimensions: [{ field: 'customers.region' }], measures: [{ metric: 'revenue' }], where: 'orders.order_rank = 1', orderBy: [] };
  const window = 'ROW_NUMBER\\(\\) OVER \\(PARTITION BY "orders"\\."customer_id" ORDER BY "orders"\\."ordered_at"\\)';
  const derived = {
    mssql: new RegExp(`FROM \\(SELECT \\[orders\\]\\.\\[customer_id\\], \\[orders\\]\\.\\[ordered_at\\], \\[orders\\]\\.\\[amount\\], ${window} AS \\[w__order_rank\\] FROM \\[semshapes_sql\\]\\.\\[orders\\] \\[orders\\]\\) \\[orders\\] LEFT JOIN .* WHERE \\(\\[orders\\]\\.\\[w__order_rank\\] = \\?\\)`),
    oracle: new RegExp(`FROM \\(SELECT "orders"\\."customer_id", "orders"\\."ordered_at", "orders"\\."amount", ${window} AS "w__order_rank" FROM "semshapes_sql"\\."orders" "orders"\\) "orders" LEFT JOIN .* WHERE \\("orders"\\."w__order_rank" = \\?\\)`),
  };
  for (const family of ['mssql', 'oracle'] as const) {
    assert.match(compileQuery(model, planner, FAMILY_DIALECTS[family], firstOrders).sql, derived[family], family);
  }
  const running = compileQuery(model, planner, FAMILY_DIALECTS.oracle, { ...BY_MONTH, measures: [{ metric: 'running_revenue' }] });
  assert.match(running.sql, /SELECT "g0"\."d0" AS "month", SUM\("g0"\."m0"\) OVER \(ORDER BY "g0"\."d0" ASC NULLS LAST\) AS "running_revenue" FROM "g0"$/);
});

test('a window in having filters a derived table by a number (no boolean column there); date parts and percentiles per dialect', ({ model, planner }) => {
  const top: SemanticQuery = { dimensions: [{ field: 'customers.region' }], measures: [{ metric: 'revenue' }], having: 'RANK() OVER (ORDER BY revenue DESC) <= 2', orderBy: [] };
  const mssql = compileQuery(model, planner, FAMILY_DIALECTS.mssql, top).sql;
  assert.match(mssql, /SELECT \[r\]\.\[d0\] AS \[region\], \[r\]\.\[m0\] AS \[revenue\] FROM \(SELECT \[g0\]\.\[d0\] AS \[d0\], \[g0\]\.\[m0\] AS \[m0\], CASE WHEN \(RANK\(\) OVER \(ORDER BY CASE WHEN \[g0\]\.\[m0\] IS NULL THEN 0 ELSE 1 END, \[g0\]\.\[m0\] DESC\) <= \?\) THEN 1 ELSE 0 END AS \[h0\] FROM \[g0\]\) \[r\] WHERE \[r\]\.\[h0\] = 1$/);
  const parts: SemanticQuery = { dimensions: [], measures: [{ expression: 'MAX(QUARTER(orders.ordered_at))', alias: 'q' }, { expression: 'MAX(YEAR(orders.ordered_at))', alias: 'y' }], orderBy: [] };
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.mssql, parts).sql, /MAX\(DATEPART\(quarter, "orders"\."ordered_at"\)\) AS \[m0\], MAX\(DATEPART\(year, "orders"\."ordered_at"\)\)/);
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.oracle, parts).sql, /MAX\(TO_NUMBER\(TO_CHAR\("orders"\."ordered_at", 'Q'\)\)\) AS "m0", MAX\(EXTRACT\(YEAR FROM "orders"\."ordered_at"\)\)/);
  const median: SemanticQuery = { dimensions: [], measures: [{ expression: 'MEDIAN(orders.amount)', alias: 'm' }], orderBy: [] };
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.oracle, median).sql, /PERCENTILE_CONT\(0\.5\) WITHIN GROUP \(ORDER BY "orders"\."amount"\) AS "m0"/);
  assert.throws(() => compileQuery(model, planner, FAMILY_DIALECTS.mssql, median), /no aggregate MEDIAN/);
});

test('SQL Server and Oracle: an expression dimension holding a literal is computed once per row (CROSS APPLY) and grouped by that column, each value bound once', ({ model, planner }) => {
  const sized: SemanticQuery = { dimensions: [{ field: "CASE WHEN orders.amount > 100 THEN 'big' ELSE 'small' END", alias: 'size' }, { field: 'orders.status' }], measures: [{ metric: 'revenue' }], orderBy: [] };
  const expected = {
    mssql: /^WITH \[g0\] AS \(SELECT \[d__\]\.\[d0\] AS \[d0\], "orders"\."status" AS \[d1\], SUM\("orders"\."amount"\) AS \[m0\] FROM \[semshapes_sql\]\.\[orders\] \[orders\] CROSS APPLY \(SELECT \(CASE WHEN \("orders"\."amount" > \?\) THEN \? ELSE \? END\) AS \[d0\]\) \[d__\] GROUP BY \[d__\]\.\[d0\], "orders"\."status"\)/,
    oracle: /^WITH "g0" AS \(SELECT "d__"\."d0" AS "d0", "orders"\."status" AS "d1", SUM\("orders"\."amount"\) AS "m0" FROM "semshapes_sql"\."orders" "orders" CROSS APPLY \(SELECT \(CASE WHEN \("orders"\."amount" > \?\) THEN \? ELSE \? END\) AS "d0" FROM DUAL\) "d__" GROUP BY "d__"\."d0", "orders"\."status"\)/,
  };
  for (const family of ['mssql', 'oracle'] as const) {
    const plan = compileQuery(model, planner, FAMILY_DIALECTS[family], sized);
    assert.match(plan.sql, expected[family], family);
    assert.equal(bindings(plan.params, sized), [100, 'big', 'small'], family);
  }
  // Where the server groups by position, no derived table: GROUP BY 1.
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.mysql, sized).sql, /GROUP BY 1, `orders`\.`status`|GROUP BY 1, "orders"\."status"/);
});

test('the expression language\'s date arithmetic, SPLIT_PART and regular expressions on SQL Server and Oracle; refused where the server has no form', ({ model, planner }) => {
  const fields = (...expressions: string[]): SemanticQuery => ({ dimensions: [], measures: [], fields: expressions.map((expression, index) => ({ expression, alias: `f${index}` })), orderBy: [] });
  const sql = (family: 'mssql' | 'oracle', query: SemanticQuery) => compileQuery(model, planner, FAMILY_DIALECTS[family], query).sql;
  const dates = fields('DATEADD(month, 2, orders.ordered_at)', 'DATEDIFF(week, orders.ordered_at, CURRENT_DATE)', 'DATEDIFF(hour, orders.ordered_at, CURRENT_TIMESTAMP)', 'DATEADD(hour, orders.id, orders.ordered_at)');
  assert.match(sql('mssql', dates), /DATEADD\(month, \?, "orders"\."ordered_at"\) AS \[f0\], DATEDIFF\(week, DATEADD\(day, -1, "orders"\."ordered_at"\), DATEADD\(day, -1, CURRENT_DATE\)\) AS \[f1\], DATEDIFF\(hour, "orders"\."ordered_at", CURRENT_TIMESTAMP\) AS \[f2\]/);
  assert.match(sql('oracle', dates), /ADD_MONTHS\("orders"\."ordered_at", \(\?\) \* 1\) AS "f0", ROUND\(\(TRUNC\(CURRENT_DATE, 'IW'\) - TRUNC\("orders"\."ordered_at", 'IW'\)\) \/ 7\) AS "f1", ROUND\(\(TRUNC\(CURRENT_TIMESTAMP, 'HH'\) - TRUNC\("orders"\."ordered_at", 'HH'\)\) \* 24\) AS "f2", \("orders"\."ordered_at" \+ NUMTODSINTERVAL\("orders"\."id", 'HOUR'\)\) AS "f3"/);
  const texts = fields("REGEXP_LIKE(orders.status, '^p')", "REGEXP_COUNT(orders.status, 'a')", "SPLIT_PART(orders.status, 'a', 2)");
  assert.match(sql('oracle', texts), /REGEXP_LIKE\("orders"\."status", \?\) AS "f0", REGEXP_COUNT\("orders"\."status", \?\) AS "f1", \(CASE WHEN \? > 1 AND INSTR\("orders"\."status", \?, 1, \? - 1\) = 0 THEN NULL ELSE SUBSTR\(/);
  for (const refused of ["REGEXP_LIKE(orders.status, '^p')", "SPLIT_PART(orders.status, 'a', 2)"]) {
    assert.throws(() => sql('mssql', fields(refused)), /has no form of (REGEXP_LIKE|SPLIT_PART)/, refused);
  }
  const casts = fields('CAST(orders.amount AS DECIMAL(10, 2))', 'CAST(orders.id AS VARCHAR)', 'CAST(orders.id AS INTEGER)', 'CAST(orders.ordered_at AS TIMESTAMP)');
  assert.match(sql('mssql', casts), /CAST\("orders"\."amount" AS DECIMAL\(10, 2\)\) AS \[f0\], CAST\("orders"\."id" AS NVARCHAR\(MAX\)\) AS \[f1\], CAST\("orders"\."id" AS INT\) AS \[f2\], CAST\("orders"\."ordered_at" AS DATETIME2\)/);
  assert.match(sql('oracle', casts), /CAST\("orders"\."amount" AS NUMBER\(10, 2\)\) AS "f0", CAST\("orders"\."id" AS VARCHAR2\(4000\)\) AS "f1", CAST\("orders"\."id" AS NUMBER\(10\)\) AS "f2", CAST\("orders"\."ordered_at" AS TIMESTAMP\)/);
  const math = fields('TRUNC(orders.amount, 1)', 'LOG(2, orders.amount)', 'LN(orders.amount)', 'MOD(orders.id, 2)', 'CEIL(orders.amount)', 'PI()', 'LOG10(orders.amount)');
  assert.match(sql('mssql', math), /ROUND\("orders"\."amount", \?, 1\) AS \[f0\], LOG\("orders"\."amount", \?\) AS \[f1\], LOG\("orders"\."amount"\) AS \[f2\], \("orders"\."id" % \?\) AS \[f3\], CEILING\("orders"\."amount"\) AS \[f4\], PI\(\) AS \[f5\]/);
  assert.match(sql('oracle', math), /TRUNC\("orders"\."amount", \?\) AS "f0", LOG\(\?, "orders"\."amount"\) AS "f1", LN\("orders"\."amount"\) AS "f2", MOD\("orders"\."id", \?\) AS "f3", CEIL\("orders"\."amount"\) AS "f4", ACOS\(-1\) AS "f5", LOG\(10, "orders"\."amount"\) AS "f6"/);
  assert.match(sql('mssql', fields("CONCAT(orders.status, '-')")), /CONCAT\("orders"\."status", \?\) AS \[f0\]/);
  assert.match(compileQuery(model, planner, FAMILY_DIALECTS.postgres, fields("CONCAT(orders.status, '-')")).sql, /CONCAT\("orders"\."status", CAST\(\? AS TEXT\)\)/);
});

test('the same query compiles to the same text every time, values apart (D-014); MySQL stitches with <=> and sorts NULLs by a flag', ({ model, planner }) => {
  const first = compileQuery(model, planner, FAMILY_DIALECTS.mysql, TWO_FACTS);
  const second = compileQuery(model, planner, FAMILY_DIALECTS.mysql, { ...TWO_FACTS, where: "customers.region <> 'WEST'" });
  assert.is(first.sql, second.sql);
  assert.match(first.sql, /`g0`\.`d0` <=> `k`\.`d0`/);
  assert.match(first.sql, /ORDER BY CASE WHEN `k`\.`d0` IS NULL THEN 0 ELSE 1 END, `k`\.`d0` DESC LIMIT \?$/);
});

test.run();
