import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { demoConfig, startTestService, type TestService } from '../../support/test-service.js';
import { RESTRICTED_TOKEN, seedStatements, shapesBundle, TABLES, VDB, type FamilyTypes } from './shapes-fixtures.js';
import { skippedHere } from '../../support/backends.js';

export interface ShapesBackend {
  name: string;
  skip?: string | undefined;
  /** The schema the tables live in (MySQL: the database). */
  schema: string;
  /** Creates the schema where the backend needs it. */
  setup: string[];
  types: FamilyTypes;
  /** The service's datasource config (the open datasource is handed in under this name). */
  datasourceConfig: Record<string, unknown>;
  open(): Promise<Datasource>;
  closeAfter: boolean;
}

const ROUTE = `/api/v1/semantic/vdbs/${VDB}/versions/1/query`;
type Row = Record<string, unknown>;

/** Numbers as the drivers give them (strings for decimals): compared as numbers, NULL as null. */
function normal(rows: Row[], columns: string[]): unknown[][] {
  const value = (cell: unknown) => {
    if (cell === null || cell === undefined) return null;
    if (typeof cell === 'string' && /^-?\d+(\.\d+)?$/.test(cell)) return Number(cell);
    if (typeof cell === 'string' && /^\d{4}-\d{2}-\d{2}/.test(cell)) return cell.slice(0, 10);
    return cell;
  };
  return rows.map((row) => columns.map((column) => value(row[column])));
}

/** Rows sorted so that expected tables can be written in any order. */
function sorted(rows: unknown[][]): unknown[][] {
  return [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

export function runShapesSuite(backend: ShapesBackend): void {
  const test = suite<{ raw: Datasource; service: TestService }>(`${backend.name}: semantic query shapes of the OSI Foundation §6`);
  if (skippedHere(test, backend)) return;
  const qualify = (table: string) => `${backend.schema}.${table}`;

  test.before(async (context) => {
    context.raw = await backend.open();
    for (const statement of [...backend.setup, ...seedStatements(backend.types, qualify)]) await context.raw.query(statement, []);
    const config = demoConfig({ descriptors: './bundle', datasources: { shapes_db: backend.datasourceConfig } });
    (config['auth'] as { tokens: unknown[] }).tokens.push({ token: RESTRICTED_TOKEN, subject: 'restricted', roles: ['restricted'] });
    context.service = await startTestService({ config, files: shapesBundle(backend.schema, 'shapes_db'), datasources: { shapes_db: context.raw } });
  });
  test.after(async ({ raw, service }) => {
    await service?.close();
    if (!raw) return;
    await dropSyncedRoles(service, raw);
    for (const table of TABLES) await raw.query(`drop table if exists ${qualify(table)}`, []);
    if (backend.closeAfter) await raw.close();
  });

  const query = async (service: TestService, body: unknown, token?: string) => {
    const response = await service.request(ROUTE, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, ...(token ? { token } : {}) });
    return { status: response.status, body: (await response.json()) as Row };
  };
  const rows = async (service: TestService, body: unknown, columns: string[]) => {
    const reply = await query(service, body);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    return sorted(normal(reply.body['rows'] as Row[], columns));
  };
  const refused = async (service: TestService, body: unknown, osiCode: string) => {
    const reply = await query(service, body);
    assert.equal([reply.status, reply.body['code'], (reply.body['details'] as Row | undefined)?.['osiCode']], [400, 'semantic_query_invalid', osiCode], JSON.stringify(reply.body));
  };

  test('star: revenue by region LEFT from the fact; the orphan order and the customer without region fall in the NULL group (§6.6, Semantic 1)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'] }, ['region', 'revenue']), sorted([
      ['EAST', 350], ['WEST', 300], [null, 90],
    ]));
  });

  test('an enriched field (orders.customer_region = customers.region, §4.3.1) as a dimension: LEFT from orders, the orphan and NULL region in the NULL group', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['orders.customer_region'], measures: ['revenue', 'order_count'] }, ['customer_region', 'revenue', 'order_count']), sorted([
      ['EAST', 350, 3], ['WEST', 300, 2], [null, 90, 2],
    ]));
    // Without measures: the values on orders' rows (NORTH has no order; the orphan and customer 5 give NULL).
    assert.equal(await rows(service, { dimensions: ['orders.customer_region'] }, ['customer_region']), sorted([['EAST'], ['WEST'], [null]]));
  });

  test('an enriched field in where: only the orders of EAST customers, by status', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['orders.status'], measures: ['revenue'], where: "orders.customer_region = 'EAST'" }, ['status', 'revenue']), sorted([
      ['paid', 300], ['cancelled', 50],
    ]));
  });

  test('an enriched field inside measures: an expression and a metric read it, orders still counted once', async ({ service }) => {
    const body = { dimensions: ['orders.status'], measures: ['east_revenue', { expression: 'COUNT(DISTINCT orders.customer_region)', alias: 'regions' }] };
    assert.equal(await rows(service, body, ['status', 'east_revenue', 'regions']), sorted([['paid', 300, 2], ['cancelled', 50, 1]]));
    assert.equal(await rows(service, { measures: ['east_revenue'] }, ['east_revenue']), [[350]]);
  });

  test('a scalar query of an enriched field: one row per order, the orphan order NULL', async ({ service }) => {
    const reply = await query(service, { fields: ['orders.id', 'orders.customer_region'], orderBy: ['id'] });
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(normal(reply.body['rows'] as Row[], ['id', 'customer_region']), [[1, 'EAST'], [2, 'EAST'], [3, 'EAST'], [4, 'WEST'], [5, null], [6, null], [7, 'WEST']]);
  });

  test('an enriched field whose dataset the query already has another way is E_AMBIGUOUS_PATH: customers counted by their orders\' customer_region', async ({ service }) => {
    // customers is the measure's home; orders.customer_region would read the home's row, not NULL for a customer without orders.
    await refused(service, { dimensions: ['orders.customer_region'], measures: ['customer_count'] }, 'E_AMBIGUOUS_PATH');
    // The same question asked with the dimension's own field has one answer.
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['customer_count'] }, ['region', 'customer_count']), sorted([
      ['EAST', 2], ['WEST', 1], ['NORTH', 1], [null, 1],
    ]));
  });

  test('fields of fields of one dataset: inlined, and over an enriched field the enrichment comes along', async ({ service }) => {
    // doubled_plus = amount * 2 + 1 over the six orders with an amount: 2 * 740 + 6.
    assert.equal(await rows(service, { measures: [{ expression: 'SUM(orders.doubled_plus)', alias: 'total' }] }, ['total']), [[1486]]);
    assert.equal(await rows(service, { dimensions: ['orders.region_label'], measures: ['revenue'] }, ['region_label', 'revenue']), sorted([
      ['EAST', 350], ['WEST', 300], ['none', 90],
    ]));
  });

  test('COUNT, COUNT of a NULL column and AVG ignore NULLs as SQL does (§6.11)', async ({ service }) => {
    const body = {
      dimensions: ['customers.region'],
      measures: ['order_count', { expression: 'COUNT(orders.amount)', alias: 'counted' }, { expression: 'AVG(orders.amount)', alias: 'average' }],
    };
    const rounded = (await rows(service, body, ['region', 'order_count', 'counted', 'average']))
      .map((row) => row.map((cell) => (typeof cell === 'number' ? Math.round(cell * 100) / 100 : cell)));
    assert.equal(rounded, sorted([['EAST', 3, 3, 116.67], ['WEST', 2, 1, 300], [null, 2, 2, 45]]));
  });

  test('two facts sharing a dimension are aggregated apart and stitched: no group lost, one NULL group (§6.7, §6.8.2, Semantic 3)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue', 'returned'] }, ['region', 'revenue', 'returned']), sorted([
      ['EAST', 350, 25], ['WEST', 300, null], ['NORTH', null, 10], [null, 90, 12],
    ]));
  });

  test('a model metric combining metrics of two facts (§4.5 form 2): each operand at the query\'s grain, then the arithmetic', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['net_revenue'] }, ['region', 'net_revenue']), sorted([
      ['EAST', 325], ['WEST', null], ['NORTH', null], [null, 78],
    ]));
    assert.equal(await rows(service, { measures: ['net_revenue', 'average_order'] }, ['net_revenue', 'average_order']).then((found) => found.map(([net, average]) => [net, Math.round((average as number) * 100)])), [[693, 10571]]);
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], having: 'net_revenue > 100' }, ['region', 'revenue']), [['EAST', 350]]);
  });

  test('two facts without dimensions: one row of grand totals (§6.6 row 4)', async ({ service }) => {
    assert.equal(await rows(service, { measures: ['revenue', 'returned', 'order_count'] }, ['revenue', 'returned', 'order_count']), [[740, 47, 7]]);
  });

  test('where filters rows before aggregation, with bound values, as text or structured filters (§6.3)', async ({ service }) => {
    const expected = sorted([['EAST', 300], ['WEST', 300], [null, 90]]);
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], where: "orders.status = 'paid'" }, ['region', 'revenue']), expected);
    assert.equal(await rows(service, {
      dimensions: ['customers.region'], measures: ['revenue'], where: [{ field: 'orders.status', operator: 'in', values: ['paid'] }],
    }, ['region', 'revenue']), expected);
  });

  test('a structured filter\'s values are bound: the same shape with other values answers other rows (one cached statement)', async ({ service }) => {
    const by = (values: string[]) => rows(service, { dimensions: ['customers.region'], measures: ['revenue'], where: [{ field: 'orders.status', operator: 'in', values }] }, ['region', 'revenue']);
    assert.equal(await by(['cancelled']), [['EAST', 50]]);
    assert.equal(await by(['paid']), sorted([['EAST', 300], ['WEST', 300], [null, 90]]));
    const orphans = await rows(service, { dimensions: ['customers.region'], measures: ['order_count'], where: [{ field: 'customers.region', operator: 'equals', values: [null] }] }, ['region', 'order_count']);
    assert.equal(orphans, [[null, 2]]);
  });

  test('an aggregate expression with literals of its own (bound) is computed once per group', async ({ service }) => {
    const body = { dimensions: ['customers.region'], measures: [{ expression: "SUM(CASE WHEN orders.status = 'paid' THEN orders.amount END)", alias: 'paid' }], having: "SUM(CASE WHEN orders.status = 'paid' THEN orders.amount END) >= 100" };
    assert.equal(await rows(service, body, ['region', 'paid']), sorted([['EAST', 300], ['WEST', 300]]));
  });

  test('a window over the query\'s rows ranks the groups (§6.10.1); a measure expression combines metrics of two facts', async ({ service }) => {
    const body = {
      dimensions: ['customers.region'],
      measures: ['revenue', { expression: 'RANK() OVER (ORDER BY revenue DESC)', alias: 'place' }, { expression: 'revenue - returned', alias: 'net' }],
    };
    // returned brings the returns fact in: NORTH (returns only) appears, and ranks first, NULL being high (§6.10.2).
    assert.equal(await rows(service, body, ['region', 'revenue', 'place', 'net']), sorted([['NORTH', null, 1, null], ['EAST', 350, 2, 325], ['WEST', 300, 3, null], [null, 90, 4, 78]]));
  });

  test('a windowed metric is a running total at the query\'s grain: revenue per month, then summed in month order (§6.10.5)', async ({ service }) => {
    const body = { dimensions: [{ field: 'orders.ordered_at', grain: 'month', alias: 'period' }], measures: ['revenue', 'running_revenue'] };
    assert.equal(await rows(service, body, ['period', 'revenue', 'running_revenue']), sorted([
      ['2024-01-01', 100, 100], ['2024-02-01', 250, 350], ['2024-04-01', 370, 720], ['2024-05-01', 20, 740],
    ]));
    // Another window over it, or arithmetic on it, composes a windowed metric: deferred (§6.10.5); having cannot filter it.
    await refused(service, { ...body, measures: [{ expression: 'running_revenue + 0', alias: 'again' }] }, 'E_WINDOWED_METRIC_COMPOSITION');
    await refused(service, { ...body, having: 'running_revenue > 100' }, 'E_INVALID_EXPRESSION');
    // Its ORDER BY field is no dimension of this query: a row-level value finer than the query's grain (§6.10.4).
    await refused(service, { dimensions: ['customers.region'], measures: ['running_revenue'] }, 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE');
  });

  test('a windowed field is computed over its dataset\'s rows before the query groups or filters them: a dimension, a where, a scalar field (§6.10.4)', async ({ service }) => {
    // Orders per customer by date: O1, O3, O4, O5, O6 are first; O2 (customer 1) and O7 (customer 3) second.
    assert.equal(await rows(service, { dimensions: ['orders.order_rank'], measures: ['order_count'] }, ['order_rank', 'order_count']), sorted([[1, 5], [2, 2]]));
    // First orders: EAST O1 + O3, WEST O4, and the NULL group O5 (orphan) + O6 (customer without region).
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], where: 'orders.order_rank = 1' }, ['region', 'revenue']), sorted([['EAST', 150], ['WEST', 300], [null, 90]]));
    // The window ranks every order, whatever the where keeps: O7 stays second though O4 is filtered out.
    assert.equal(await rows(service, { fields: ['orders.id', 'orders.order_rank'], where: 'orders.id > 4' }, ['id', 'order_rank']), sorted([[5, 1], [6, 1], [7, 2]]));
  });

  test('OSI_SQL_2026 fields and metrics are written in the datasource\'s forms: NULLS FIRST/LAST (§6.10.2, ascending NULLs last by default), || and IFF', async ({ service }) => {
    // Amounts O1 100, O2 200, O3 50, O4 300, O5 70, O6 20, O7 NULL.
    const ranks = await rows(service, { fields: ['orders.id', 'orders.amount_rank', 'orders.amount_rank_nulls_first', 'orders.amount_rank_default', 'orders.size_label', 'DAY(orders.due_at) AS due_day'] },
      ['id', 'amount_rank', 'amount_rank_nulls_first', 'amount_rank_default', 'size_label', 'due_day']);
    // due_at is 30 days on: 02-14, 03-04, 03-21, 05-10, 05-11, 05-31, 06-01.
    assert.equal(ranks, sorted([
      [1, 3, 5, 4, 'small-paid', 14], [2, 2, 6, 5, 'big-paid', 4], [3, 5, 3, 2, 'small-cancelled', 21], [4, 1, 7, 6, 'big-paid', 10],
      [5, 4, 4, 3, 'small-paid', 11], [6, 6, 2, 1, 'small-paid', 31], [7, 7, 1, 7, 'small-paid', 1],
    ]));
    assert.equal(await rows(service, { fields: ['orders.note'], where: 'orders.id = 3' }, ['note']), [["cancelled it's a\\b"]]);
    // Amounts of 200 or more: EAST O2, WEST O4; the NULL group (O5, O6) has none.
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['big_revenue'] }, ['region', 'big_revenue']), sorted([['EAST', 200], ['WEST', 300], [null, 0]]));
  });

  test('the expression language\'s DATEADD, DATEDIFF (unit boundaries, Monday weeks), SPLIT_PART, REGEXP_*, CONCAT with literals, APPROX_* per dialect', async ({ service }) => {
    // O1 2024-01-15 10:00 (a Monday), O2 2024-02-03 10:00 (a Saturday); 20 days on: 2024-02-04 (Sunday), 2024-02-23 (Friday).
    const later = 'DATEADD(day, 20, orders.ordered_at)';
    const dates = await rows(service, {
      fields: ['orders.id', `DATEDIFF(day, orders.ordered_at, ${later}) AS d`, `DATEDIFF(week, orders.ordered_at, ${later}) AS w`,
        `DATEDIFF(month, orders.ordered_at, ${later}) AS m`, `DATEDIFF(quarter, orders.ordered_at, DATEADD(month, 2, orders.ordered_at)) AS q`,
        "YEAR(DATEADD('month', -1, orders.ordered_at)) AS y", 'DATEDIFF(hour, orders.ordered_at, DATEADD(minute, 150, orders.ordered_at)) AS h',
        'DATEDIFF(year, DATEADD(year, -3, orders.ordered_at), orders.ordered_at) AS years', "DATE_TRUNC('month', orders.ordered_at) AS month",
        "DATE_TRUNC('week', orders.ordered_at) AS week"],
      where: 'orders.id <= 2',
    }, ['id', 'd', 'w', 'm', 'q', 'y', 'h', 'years', 'month', 'week']);
    // O1: weeks of 01-15 and 01-29 apart by 2; 03-15 is in the same quarter. O2: weeks of 01-29 and 02-19; 04-03 is in the next quarter.
    assert.equal(dates, [[1, 20, 2, 1, 0, 2023, 2, 3, '2024-01-01', '2024-01-15'], [2, 20, 3, 0, 1, 2024, 2, 3, '2024-02-01', '2024-01-29']]);
    // 'paid' splits on 'a' into 'p', 'id'; 'cancelled' into 'c', 'ncelled'; a third part is ''.
    const strings = await rows(service, {
      fields: ['orders.id', "SPLIT_PART(orders.status, 'a', 2) AS second", "SPLIT_PART(orders.status, 'a', 3) AS third",
        "REGEXP_REPLACE(orders.status, '[aeiou]', '') AS consonants", "REGEXP_EXTRACT(orders.status, 'l+e') AS ll", "CONCAT(orders.status, '-', orders.id) AS tag"],
      where: ['orders.id IN (1, 3)', "REGEXP_LIKE(orders.status, '^(p|c)')"],
    }, ['id', 'second', 'third', 'consonants', 'll', 'tag']);
    assert.equal(strings, [[1, 'id', '', 'pd', null, 'paid-1'], [3, 'ncelled', '', 'cnclld', 'lle', 'cancelled-3']]);
    // CAST by the server's type names (MySQL has SIGNED, CHAR, DATETIME): 100.00 and 200.00 as whole numbers, a sized decimal, text.
    const casts = await rows(service, {
      fields: ['orders.id', 'CAST(orders.amount / 3 AS INTEGER) AS i', 'CAST(orders.amount / 3 AS DECIMAL(10, 1)) AS d', "CAST(orders.id AS VARCHAR) || 'x' AS v",
        'CAST(orders.amount AS BIGINT) + 1 AS b', "DAY(CAST('2024-03-09' AS DATE)) AS day", 'CAST(orders.amount AS NUMERIC) / 8 AS n', "CAST(orders.id AS STRING) || CAST(CAST(orders.amount AS DOUBLE) / 8 AS VARCHAR) AS s"],
      where: 'orders.id <= 2',
    }, ['id', 'i', 'd', 'v', 'b', 'day', 'n', 's']);
    assert.equal(casts, [[1, 33, 33.3, '1x', 101, 9, 12.5, 112.5], [2, 67, 66.7, '2x', 201, 9, 25, 225]]);
    // TRUNC and TRUNCATE, LOG(base, x), CEIL, MOD and LOG10 by the server's names: 100 / 3 and 200 / 3.
    const math = await rows(service, {
      fields: ['orders.id', 'TRUNC(orders.amount / 3, 1) AS t', 'TRUNCATE(orders.amount / 3) AS t0', 'LOG(2, orders.amount / 25) AS l',
        'CEIL(orders.amount / 3) AS c', 'MOD(orders.id, 2) AS m', 'LOG10(orders.amount) AS ten'],
      where: 'orders.id <= 2',
    }, ['id', 't', 't0', 'l', 'c', 'm', 'ten']);
    assert.equal(math.map((row) => row.map((cell) => (typeof cell === 'number' ? Math.round(cell * 1e9) / 1e9 : cell))), [[1, 33.3, 33, 2, 34, 1, 2], [2, 66.6, 66, 3, 67, 0, 2.301029996]]);
    // Computed exactly: two statuses; the median of 20, 50, 70, 100, 200, 300 is 85 (no aggregate percentile on MySQL/MariaDB).
    assert.equal(await rows(service, { measures: ['APPROX_COUNT_DISTINCT(orders.status) AS n'] }, ['n']), [[2]]);
    if (backend.name === 'mysql') {
      await refused(service, { measures: ['APPROX_PERCENTILE(orders.amount, 0.5) AS p'] }, 'E_FUNCTION_NOT_ALLOWED');
      await refused(service, { fields: ["REGEXP_COUNT(orders.status, 'l') AS c"] }, 'E_FUNCTION_NOT_ALLOWED');
    } else {
      assert.equal(await rows(service, { measures: ['APPROX_PERCENTILE(orders.amount, 0.5) AS p'] }, ['p']), [[85]]);
      assert.equal(await rows(service, { fields: ['orders.id', "REGEXP_COUNT(orders.status, 'l') AS c"], where: 'orders.id IN (1, 3)' }, ['id', 'c']), [[1, 0], [3, 2]]);
    }
  });

  test('a windowed field over an enriched field is computed over its dataset\'s rows joined many-to-one to the enrichment (§4.3, §6.10.4)', async ({ service }) => {
    // region_rank numbers orders by id within customer_region: EAST O1 1, O2 2, O3 3; WEST O4 1, O7 2; NULL (O5 orphan, O6 no region) O5 1, O6 2.
    assert.equal(await rows(service, { dimensions: ['orders.region_rank'], measures: ['order_count', 'revenue'] }, ['region_rank', 'order_count', 'revenue']), sorted([
      [1, 3, 470], [2, 3, 220], [3, 1, 50],
    ]));
    // With customers joined again outside the derived table: the first order of each region, orphan in the NULL group.
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], where: 'orders.region_rank = 1' }, ['region', 'revenue']), sorted([
      ['EAST', 100], ['WEST', 300], [null, 70],
    ]));
    // Ranked before the where: O7 stays second in WEST though O4 is filtered out.
    assert.equal(await rows(service, { fields: ['orders.id', 'orders.region_rank', 'orders.order_rank'], where: 'orders.id > 3' }, ['id', 'region_rank', 'order_rank']), sorted([
      [4, 1, 1], [5, 1, 1], [6, 2, 1], [7, 2, 2],
    ]));
    // Its joins are inside the derived table: a customers measure by it de-duplicates customers per rank (Semantic 2);
    // customer 4 has no order (NULL group), customers 1 and 3 have ranks 1 and 2, customer 2 rank 3, customer 5 rank 2.
    assert.equal(await rows(service, { dimensions: ['orders.region_rank'], measures: ['customer_count'] }, ['region_rank', 'customer_count']), sorted([
      [1, 2], [2, 3], [3, 1], [null, 1],
    ]));
    // It reads customers.region: outside the restricted caller's grants, 403 before any SQL.
    const denied = await query(service, { dimensions: ['orders.region_rank'], measures: ['order_count'] }, RESTRICTED_TOKEN);
    assert.equal([denied.status, denied.body['code']], [403, 'forbidden'], JSON.stringify(denied.body));
  });

  test('a windowed metric reading a row-level field of a dataset the query fans out is E_WINDOW_OVER_FANOUT_REWRITE (§6.10.3)', async ({ service }) => {
    await refused(service, { dimensions: ['orders.status'], measures: ['regional_peak'] }, 'E_WINDOW_OVER_FANOUT_REWRITE');
  });

  test('a window in having filters the grouped rows (§6.10.1 "Having: yes, over the post-GROUP BY row set"); the measures\' windows run over the rows kept', async ({ service }) => {
    const body = {
      dimensions: ['customers.region'], measures: ['revenue', 'RANK() OVER (ORDER BY revenue DESC) AS place', 'SUM(revenue) OVER () AS kept'],
      having: 'RANK() OVER (ORDER BY revenue DESC) <= 2',
    };
    assert.equal(await rows(service, body, ['region', 'revenue', 'place', 'kept']), sorted([['EAST', 350, 1, 650], ['WEST', 300, 2, 650]]));
    // Beside a plain term, over two facts: NORTH (no revenue) fails revenue > 50; the total over all four groups is 740.
    const mixed = { dimensions: ['customers.region'], measures: ['revenue', 'returned'], having: ['revenue > 50', 'SUM(revenue) OVER () > 700'] };
    assert.equal(await rows(service, mixed, ['region', 'revenue', 'returned']), sorted([['EAST', 350, 25], ['WEST', 300, null], [null, 90, 12]]));
  });

  test('having filters groups after aggregation, over metrics and grouping columns (§6.3)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], having: 'revenue > 100' }, ['region', 'revenue']), sorted([['EAST', 350], ['WEST', 300]]));
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['revenue'], having: "SUM(orders.amount) > 100 AND customers.region <> 'WEST'" }, ['region', 'revenue']), [['EAST', 350]]);
  });

  test('time grains month, quarter and year bucket the fact (§5.1)', async ({ service }) => {
    const grain = (name: string) => rows(service, { dimensions: [{ field: 'orders.ordered_at', grain: name, alias: 'period' }], measures: ['revenue'] }, ['period', 'revenue']);
    assert.equal(await grain('month'), sorted([['2024-01-01', 100], ['2024-02-01', 250], ['2024-04-01', 370], ['2024-05-01', 20]]));
    assert.equal(await grain('quarter'), sorted([['2024-01-01', 350], ['2024-04-01', 390]]));
    assert.equal(await grain('year'), [['2024-01-01', 740]]);
    assert.equal(await grain('week'), sorted([['2024-01-15', 100], ['2024-01-29', 200], ['2024-02-19', 50], ['2024-04-08', 370], ['2024-04-29', 20]]));
  });

  test('a measure on the one side grouped by a dimension of the many side counts each customer once per group (Semantic 2)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['orders.status'], measures: ['customer_count'] }, ['status', 'customer_count']), sorted([
      ['paid', 3], ['cancelled', 1], [null, 1],
    ]));
  });

  test('a bridge: each movie counts once per height, the movie without cast in the NULL group (§6.8.1)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['actors.height'], measures: ['gross', { expression: 'AVG(movies.gross)', alias: 'average' }] }, ['height', 'gross', 'average']), sorted([
      [170, 300, 150], [180, 50, 50], [null, 40, 40],
    ]));
  });

  test('a declared bridge is the M:N path even beside a second path of equal length through a shared dimension: each team once per level, the team without roster in the NULL group', async ({ service }) => {
    // Structurally teams ← rosters → players and teams → cities ← players are two shortest paths (E_AMBIGUOUS_PATH);
    // rosters says role: bridge. Team 1 has two pro players and counts once for pro.
    assert.equal(await rows(service, { dimensions: ['players.level'], measures: ['budget'] }, ['level', 'budget']), sorted([
      ['pro', 300], ['amateur', 40], [null, 10],
    ]));
    // The shared dimension alone, without the bridge, is still no M:N path: a team budget by the city of players is cities' own.
    assert.equal(await rows(service, { dimensions: ['cities.name'], measures: ['budget'] }, ['name', 'budget']), sorted([['oslo', 140], ['rome', 210]]));
  });

  test('order, limit and offset; NULL sorts last ascending, first descending (§5.1)', async ({ service }) => {
    const reply = await query(service, { dimensions: ['customers.region'], measures: ['revenue'], orderBy: [{ field: 'revenue', direction: 'asc' }], limit: 2, offset: 1 });
    assert.equal(normal(reply.body['rows'] as Row[], ['region', 'revenue']), [['WEST', 300], ['EAST', 350]]);
    const descending = await query(service, { dimensions: ['customers.region'], measures: ['returned'], orderBy: [{ field: 'customers.region', direction: 'desc' }] });
    // Returns reach EAST, NORTH and (orphan, no region) NULL; WEST has none, so a single-measure query has no WEST row.
    assert.equal(normal(descending.body['rows'] as Row[], ['region']).map(([region]) => region), [null, 'NORTH', 'EAST']);
  });

  test('two paths are E_AMBIGUOUS_PATH; no path E_NO_PATH; unrelated facts without dimension E3013', async ({ service }) => {
    await refused(service, { dimensions: ['users.name'], measures: ['points'] }, 'E_AMBIGUOUS_PATH');
    await refused(service, { dimensions: ['weather.day'], measures: ['revenue'] }, 'E_NO_PATH');
    await refused(service, { measures: ['revenue', 'average_temp'] }, 'E3013_NO_STITCHING_DIMENSION');
  });

  test('a fact reaching a sibling fact through a shared dimension, without bridge, is E3012; so is an N:N edge (no key on its to side) past a dimension', async ({ service }) => {
    await refused(service, { dimensions: ['returns.id'], measures: ['revenue'] }, 'E3012_MN_NO_SAFE_REWRITE');
    await refused(service, { dimensions: ['segments.label'], measures: ['revenue'] }, 'E3012_MN_NO_SAFE_REWRITE');
  });

  test('an N:N edge straight from the measure\'s dataset is resolved like a bridge: each customer once per label, none lost (§4.5, §6.8.1)', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['segments.label'], measures: ['customer_count'] }, ['label', 'customer_count']), sorted([
      ['big', 3], ['core', 2], [null, 2],
    ]));
  });

  test('a window over rows its home would see repeated is E_WINDOW_OVER_FANOUT_REWRITE (§6.10.3); without fan-out a bare one is a finer-grain reference (§6.10.4)', async ({ service }) => {
    // customers rows repeat once per order when grouped by orders.status; movies rows once per actor through the bridge.
    await refused(service, { dimensions: ['orders.status'], measures: [{ expression: 'SUM(customers.id) OVER ()' }] }, 'E_WINDOW_OVER_FANOUT_REWRITE');
    await refused(service, { dimensions: ['actors.height'], measures: ['gross'], orderBy: [{ field: 'SUM(movies.gross) OVER (PARTITION BY movies.movie_id)', direction: 'asc' }] }, 'E_WINDOW_OVER_FANOUT_REWRITE');
    await refused(service, { dimensions: ['customers.region'], measures: [{ expression: 'SUM(orders.amount) OVER (PARTITION BY customers.region)' }] }, 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE');
  });

  test('a window inside an aggregate runs at its dataset\'s grain, before any join, then the aggregate at the query\'s (§6.10.1, §6.10.3)', async ({ service }) => {
    // Each order carries its customer's total (c1 300 twice, c3 300 twice, c2 50, the orphan 70, c5 20), summed per region.
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['SUM(SUM(orders.amount) OVER (PARTITION BY orders.customer_id)) AS s'] }, ['region', 's']), sorted([
      ['EAST', 650], ['WEST', 600], [null, 90],
    ]));
    // Customers numbered 1 to 5 by id, then the largest per order status: a customer counts once per status (Semantic 2),
    // customer 4 without orders in the NULL group. The window saw each customer once, whatever the join repeats.
    assert.equal(await rows(service, { dimensions: ['orders.status'], measures: ['MAX(ROW_NUMBER() OVER (ORDER BY customers.id)) AS m'] }, ['status', 'm']), sorted([
      ['paid', 5], ['cancelled', 2], [null, 4],
    ]));
    // Over an enriched field: orders counted per customer_region (EAST 3, WEST 2, NULL 2), the largest per status.
    assert.equal(await rows(service, { dimensions: ['orders.status'], measures: ['MAX(COUNT(orders.id) OVER (PARTITION BY orders.customer_region)) AS m'] }, ['status', 'm']), sorted([
      ['paid', 3], ['cancelled', 3],
    ]));
    await refused(service, { measures: ['MAX(ROW_NUMBER() OVER (PARTITION BY customers.region ORDER BY orders.id)) AS m'] }, 'E_INVALID_EXPRESSION');
  });

  test('window frames ROWS and RANGE with literal bounds over the query\'s rows; GROUPS and non-literal bounds are E_DEFERRED_FRAME_MODE (§6.10.6)', async ({ service }) => {
    const frame = (clause: string) => ({ expression: `SUM(revenue) OVER (ORDER BY customers.region ${clause})` });
    const body = {
      dimensions: ['customers.region'],
      measures: ['revenue', { ...frame('ROWS BETWEEN 1 PRECEDING AND CURRENT ROW'), alias: 'moving' }, { ...frame('RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING'), alias: 'total' }, { ...frame('ROWS 0 PRECEDING'), alias: 'own' }],
    };
    // Regions in window order EAST, WEST, then NULL (high end): moving sums 350, 350 + 300, 300 + 90.
    assert.equal(await rows(service, body, ['region', 'revenue', 'moving', 'total', 'own']), sorted([
      ['EAST', 350, 350, 740, 350], ['WEST', 300, 650, 740, 300], [null, 90, 390, 740, 90],
    ]));
    await refused(service, { dimensions: ['customers.region'], measures: [frame('GROUPS 1 PRECEDING')] }, 'E_DEFERRED_FRAME_MODE');
    await refused(service, { dimensions: ['customers.region'], measures: [frame('ROWS BETWEEN revenue PRECEDING AND CURRENT ROW')] }, 'E_DEFERRED_FRAME_MODE');
  });

  test('one aggregate reading two datasets no path connects is E3013 (§6.2 A.6.6)', async ({ service }) => {
    await refused(service, { measures: [{ expression: 'SUM(orders.amount * weather.temp)' }] }, 'E3013_NO_STITCHING_DIMENSION');
  });

  test('where and having shapes are checked with the Foundation codes (§6.2 A.3)', async ({ service }) => {
    const base = { dimensions: ['customers.region'], measures: ['revenue'] };
    await refused(service, { ...base, where: 'SUM(orders.amount) > 1' }, 'E_AGGREGATE_IN_WHERE');
    await refused(service, { ...base, where: 'revenue > 1' }, 'E_AGGREGATE_IN_WHERE');
    await refused(service, { ...base, where: 'orders.amount > 1 AND SUM(orders.amount) > 1' }, 'E_MIXED_PREDICATE_LEVEL');
    await refused(service, { ...base, where: 'ROW_NUMBER() OVER (ORDER BY orders.id) = 1' }, 'E_WINDOW_IN_WHERE');
    await refused(service, { ...base, having: "orders.status = 'paid'" }, 'E_NON_AGGREGATE_IN_HAVING');
    await refused(service, { ...base, having: 'orders.amount > 1 AND revenue > 1' }, 'E_MIXED_PREDICATE_LEVEL');
    await refused(service, { ...base, measures: [{ expression: 'orders.amount' }] }, 'E_UNAGGREGATED_FINER_GRAIN_REFERENCE');
    await refused(service, { ...base, measures: [{ expression: 'AVG(SUM(orders.amount))' }] }, 'E_NESTED_AGGREGATION_DEFERRED');
    await refused(service, { ...base, measures: ['nothing'] }, 'E_NAME_NOT_FOUND');
    await refused(service, { dimensions: ['customers.nowhere'] }, 'E_NAME_NOT_FOUND');
    await refused(service, {}, 'E_EMPTY_AGGREGATION_QUERY');
    await refused(service, { fields: ['orders.id'], measures: ['revenue'] }, 'E_MIXED_QUERY_SHAPE');
  });

  test('an expression names only model names, allowed functions and literals: no subquery, no other function, no caller text in the SQL', async ({ service }) => {
    const base = { dimensions: ['customers.region'], measures: ['revenue'] };
    await refused(service, { ...base, where: 'orders.id IN (SELECT 1)' }, 'E_INVALID_EXPRESSION');
    await refused(service, { ...base, where: "pg_read_file('/etc/passwd') = 'x'" }, 'E_FUNCTION_NOT_ALLOWED');
    await refused(service, { ...base, where: "orders.status = 'a'; drop table x" }, 'E_INVALID_EXPRESSION');
    const response = await service.request(`${ROUTE}?explain=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...base, where: "orders.status = 'x'' or 1=1 --'" }),
    });
    const explained = (await response.json()) as { sql: string; params: unknown[] };
    assert.is(response.status, 200);
    assert.not.match(explained.sql, /or 1=1/);
    assert.equal(explained.params, ["x' or 1=1 --"]);
  });

  test('403 before any SQL when a field reads a column outside the caller\'s grants; 404 and 409 as catalogued', async ({ service }) => {
    const denied = await query(service, { dimensions: ['customers.region'], measures: ['revenue'] }, RESTRICTED_TOKEN);
    assert.equal([denied.status, denied.body['code']], [403, 'forbidden'], JSON.stringify(denied.body));
    // An enriched field reads customers.region too, whether named as a dimension, in where or through a metric.
    for (const body of [{ dimensions: ['orders.customer_region'], measures: ['revenue'] }, { measures: ['revenue'], where: "orders.customer_region = 'EAST'" }, { measures: ['east_revenue'] }]) {
      const enriched = await query(service, body, RESTRICTED_TOKEN);
      assert.equal([enriched.status, enriched.body['code']], [403, 'forbidden'], JSON.stringify(enriched.body));
    }
    const allowed = await query(service, { dimensions: ['customers.id'], measures: ['revenue'] }, RESTRICTED_TOKEN);
    assert.is(allowed.status, 200, JSON.stringify(allowed.body));
    const missing = await service.request('/api/v1/semantic/vdbs/nowhere/versions/1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"measures":["revenue"]}' });
    assert.is(missing.status, 404);
    const plain = await service.request('/api/v1/semantic/vdbs/plain/versions/1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"dimensions":["weather.day"]}' });
    assert.equal([plain.status, ((await plain.json()) as Row)['code']], [409, 'semantic_unavailable']);
    // A model the Foundation refuses: 409 with the refusal's code (here §6.10.5's).
    const broken = await service.request('/api/v1/semantic/vdbs/broken/versions/1/query', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"measures":["warmth"]}' });
    const brokenBody = (await broken.json()) as Row;
    assert.equal([broken.status, brokenBody['code'], (brokenBody['details'] as Row)['osiCode']], [409, 'semantic_unavailable', 'E_WINDOWED_METRIC_COMPOSITION'], JSON.stringify(brokenBody));
  });

  test('a scalar query: one row per home row, enriched LEFT (the orphan keeps a NULL region); fan-out and aggregates refused (§5.1.2, §6.2 B)', async ({ service }) => {
    const reply = await query(service, { fields: ['orders.id', 'orders.amount', { field: 'customers.region', alias: 'area' }], where: "orders.status = 'paid'", orderBy: ['id'], limit: 3 });
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    assert.equal(normal(reply.body['rows'] as Row[], ['id', 'amount', 'area']), [[1, 100, 'EAST'], [2, 200, 'EAST'], [4, 300, 'WEST']]);
    assert.equal(await rows(service, { fields: ['orders.id', 'customers.region'], where: 'orders.id = 5' }, ['id', 'region']), [[5, null]]);
    await refused(service, { fields: ['orders.amount', 'returns.amount'] }, 'E_FAN_OUT_IN_SCALAR_QUERY');
    await refused(service, { fields: ['orders.id', 'revenue'] }, 'E_AGGREGATE_IN_SCALAR_QUERY');
    await refused(service, { fields: [{ expression: 'SUM(orders.amount)' }] }, 'E_AGGREGATE_IN_SCALAR_QUERY');
    await refused(service, { fields: [] }, 'E_EMPTY_SCALAR_QUERY');
  });

  test('contains, startsWith and endsWith match %, _, ! and [ in the value literally (escaped, bound)', async ({ service }) => {
    const codes = (operator: string, value: string) => rows(service, { dimensions: ['codes.code'], where: [{ field: 'codes.code', operator, values: [value] }] }, ['code']);
    assert.equal(await codes('contains', '%'), [['50%']]);
    assert.equal(await codes('endsWith', '0%'), [['50%']]);
    assert.equal(await codes('startsWith', 'a_'), [['a_b']]);
    assert.equal(await codes('contains', '_'), [['a_b']]);
    assert.equal(await codes('contains', 'x!y'), [['x!y']]);
    assert.equal(await codes('endsWith', '!!y'), [['x!!y']]);
    assert.equal(await codes('startsWith', '[a'), [['[a]']]);
    assert.equal(await codes('contains', 'b'), sorted([['a_b'], ['axb']]));
    const explained = await service.request(`${ROUTE}?explain=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dimensions: ['codes.code'], where: [{ field: 'codes.code', operator: 'contains', values: ['5%_!'] }] }),
    });
    const plan = (await explained.json()) as { sql: string; params: unknown[] };
    assert.match(plan.sql, /LIKE \? ESCAPE '!'/);
    assert.equal(plan.params, ['%5!%!_!!%']);
  });

  test('the Foundation\'s §6.8.2 worked example, in its own spelling: every group of either fact, the missing cell NULL for SUM and 0 for COUNT (§6.11.5)', async ({ service }) => {
    const body = { query: { Dimensions: ['st_customers.region'], Measures: ['SUM(st_orders.amount) AS total_revenue', 'SUM(st_returns.amount) AS total_returns'] } };
    assert.equal(await rows(service, body, ['region', 'total_revenue', 'total_returns']), sorted([
      ['EAST', 350, 25], ['WEST', 300, null], ['NORTH', null, 10],
    ]));
    const counts = { dimensions: ['st_customers.region'], measures: ['st_order_count', 'st_orders_placed', 'COUNT(st_returns.return_id) AS return_count', 'COUNT(DISTINCT st_returns.customer_id) AS returners'] };
    assert.equal(await rows(service, counts, ['region', 'st_order_count', 'st_orders_placed', 'return_count', 'returners']), sorted([
      ['EAST', 3, 3, 1, 1], ['WEST', 1, 1, 0, 0], ['NORTH', 0, 0, 1, 1],
    ]));
    // §6.11.4: revenue / cost where cost has no rows is NULL / … = NULL, not a division error.
    const ratio = { dimensions: ['st_customers.region'], measures: ['SUM(st_orders.amount) / SUM(st_returns.amount) AS ratio'] };
    assert.equal(await rows(service, ratio, ['region', 'ratio']), sorted([['EAST', 14], ['WEST', null], ['NORTH', null]]));
  });

  test('aggregates over no rows (§6.11.1): one row at the empty grain, COUNT 0 and the others NULL; with dimensions no row', async ({ service }) => {
    const measures = ['order_count', 'revenue', 'COUNT(*) AS all_rows', 'COUNT(DISTINCT orders.customer_id) AS customers', 'AVG(orders.amount) AS average', 'MIN(orders.amount) AS least', 'MAX(orders.amount) AS most'];
    const columns = ['order_count', 'revenue', 'all_rows', 'customers', 'average', 'least', 'most'];
    assert.equal(await rows(service, { measures, where: "orders.status = 'none'" }, columns), [[0, null, 0, 0, null, null, null]]);
    // Two facts, both empty: their one-row totals combined.
    assert.equal(await rows(service, { measures: ['order_count', 'returned'], where: "customers.region = 'none'" }, ['order_count', 'returned']), [[0, null]]);
    assert.equal(await rows(service, { dimensions: ['customers.region'], measures: ['order_count'], where: "orders.status = 'none'" }, ['region', 'order_count']), []);
  });

  test('aggregates ignore NULL inputs (§6.11.2): AVG over one 5 and 99 NULLs is 5; over only NULLs COUNT(x) is 0 and SUM NULL', async ({ service }) => {
    const measures = ['AVG(readings.x) AS average', 'COUNT(readings.x) AS counted', 'COUNT(*) AS all_rows', 'SUM(readings.x) AS total', 'AVG(COALESCE(readings.x, 0)) AS as_zero'];
    const columns = ['average', 'counted', 'all_rows', 'total', 'as_zero'];
    assert.equal(await rows(service, { measures }, columns), [[5, 1, 100, 5, 0.05]]);
    assert.equal(await rows(service, { measures: measures.slice(1, 4), where: 'readings.id > 1' }, columns.slice(1, 4)), [[0, 99, null]]);
  });

  test('the canonical "first order per customer" of §6.10.4: COUNT(*) AS first_orders by region, where the windowed field is 1', async ({ service }) => {
    // First orders: O1 and O3 (EAST), O4 (WEST), O5 (orphan) and O6 (customer without region) in the NULL group.
    const body = { Dimensions: ['customers.region'], Measures: ['COUNT(*) AS first_orders'], Where: 'orders.order_rank = 1' };
    assert.equal(await rows(service, body, ['region', 'first_orders']), sorted([['EAST', 2], ['WEST', 1], [null, 2]]));
  });

  test('the request as the Foundation writes it (§5.1.1): under query:, order_by with DESC, a dimension AS an alias, where and having as text', async ({ service }) => {
    const body = {
      query: {
        dimensions: ['customers.region AS customer_region'], measures: ['revenue', 'order_count'],
        where: "orders.status = 'paid'", having: 'revenue > 100', order_by: [{ field: 'revenue', direction: 'DESC' }], limit: 50,
      },
    };
    const reply = await query(service, body);
    assert.is(reply.status, 200, JSON.stringify(reply.body));
    // EAST and WEST tie at 300 (paid orders only): the order keeps both above the cut, in either order.
    assert.equal(sorted(normal(reply.body['rows'] as Row[], ['customer_region', 'revenue', 'order_count'])), sorted([['EAST', 300, 2], ['WEST', 300, 2]]));
    // An order entry as text, with its direction; a scalar field as an expression with an alias.
    const scalar = await query(service, { fields: ['orders.id', 'orders.amount * 2 AS twice'], order_by: ['orders.id DESC'], limit: 2 });
    assert.equal(normal(scalar.body['rows'] as Row[], ['id', 'twice']), [[7, null], [6, 40]]);
    await refused(service, { query: { dimensions: ['customers.region'], orderBy: ['region'], order_by: ['region'] } }, 'E_INVALID_QUERY');
    // A measure written as the model writes a metric ({name, expression}); one structured filter without a list.
    const named = { dimensions: ['customers.region'], measures: [{ name: 'total', expression: 'SUM(orders.amount)' }, { name: 'revenue' }], where: { field: 'orders.status', operator: 'equals', values: ['paid'] } };
    assert.equal(await rows(service, named, ['region', 'total', 'revenue']), sorted([['EAST', 300, 300], ['WEST', 300, 300], [null, 90, 90]]));
  });

  test('scalar query shapes (§5.1.2, §6.2 B): the home is the fields\' dataset, a filter on its many side repeats its rows; empty fields beside dimensions is an aggregation query; having is the other shape', async ({ service }) => {
    await refused(service, { fields: ['customers.id'], where: "orders.status = 'paid'" }, 'E_FAN_OUT_IN_SCALAR_QUERY');
    await refused(service, { fields: ['orders.id'], where: 'returns.amount > 1' }, 'E_FAN_OUT_IN_SCALAR_QUERY');
    await refused(service, { fields: ['orders.amount', 'returns.amount', 'customers.region'] }, 'E_FAN_OUT_IN_SCALAR_QUERY');
    assert.equal(await rows(service, { fields: ['customers.id'], where: "customers.region = 'EAST'" }, ['id']), [[1], [2]]);
    assert.equal(await rows(service, { fields: [], dimensions: ['customers.region'] }, ['region']), sorted([['EAST'], ['WEST'], ['NORTH'], [null]]));
    await refused(service, { fields: ['orders.id'], having: 'revenue > 1' }, 'E_MIXED_QUERY_SHAPE');
    await refused(service, { fields: [], dimensions: [] }, 'E_EMPTY_AGGREGATION_QUERY');
  });

  test('holistic aggregates over the bridge (§6.8.1, §6.11.3): COUNT(DISTINCT) everywhere; MEDIAN and PERCENTILE_CONT/DISC where the server has them as aggregates', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['actors.height'], measures: ['COUNT(DISTINCT movies.movie_id) AS movies', 'COUNT(DISTINCT appearances.actor_id) AS cast_size'] }, ['height', 'movies', 'cast_size']), sorted([
      [170, 2, 2], [180, 1, 1], [null, 1, 0],
    ]));
    // The per-actor-first reading is nested aggregation, deferred (§4.5).
    await refused(service, { dimensions: ['actors.height'], measures: ['AVG(AVG(movies.gross)) AS nested'] }, 'E_NESTED_AGGREGATION_DEFERRED');
    const body = {
      dimensions: ['actors.height'],
      measures: ['MEDIAN(movies.gross) AS median_gross', 'PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY movies.gross) AS cont', 'PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY movies.gross) AS disc'],
    };
    if (backend.name === 'mysql') {
      await refused(service, body, 'E_FUNCTION_NOT_ALLOWED');
      return;
    }
    assert.equal(await rows(service, body, ['height', 'median_gross', 'cont', 'disc']), sorted([[170, 150, 150, 100], [180, 50, 50, 50], [null, 40, 40, 40]]));
    // Amounts 20, 50, 70, 100, 200, 300: the continuous 25th percentile is 50 + 0.25 × 20; over no rows, NULL (§6.11.1).
    assert.equal(await rows(service, { measures: ['PERCENTILE_CONT(0.25) WITHIN GROUP (ORDER BY orders.amount) AS p', 'PERCENTILE_DISC(0.75) WITHIN GROUP (ORDER BY orders.amount) AS d'] }, ['p', 'd']), [[55, 200]]);
    assert.equal(await rows(service, { measures: ['MEDIAN(orders.amount) AS m'], where: 'orders.id > 100' }, ['m']), [[null]]);
    await refused(service, { measures: ['PERCENTILE_CONT(2) WITHIN GROUP (ORDER BY orders.amount) AS p'] }, 'E_INVALID_EXPRESSION');
  });

  test('the OSI expression language\'s conditional, date-part and string-search functions, written in forms every server has', async ({ service }) => {
    const measures = [
      "SUM(IFF(orders.status = 'paid', orders.amount, 0)) AS paid", "SUM(IF(orders.status = 'paid', 1, 0)) AS paid_count", 'SUM(NVL(orders.amount, 1)) AS nvl',
      'SUM(IFNULL(orders.amount, 1)) AS ifnull', 'SUM(NVL2(orders.amount, 1, 0)) AS with_amount', 'COUNT(NULLIFZERO(orders.amount - 100)) AS not_hundred',
      'MAX(YEAR(orders.ordered_at)) AS y', 'MAX(QUARTER(orders.ordered_at)) AS q', 'MIN(MONTH(orders.ordered_at)) AS m', 'SUM(EXTRACT(DAY FROM orders.ordered_at)) AS days',
      "MAX(DATE_PART('hour', orders.ordered_at)) AS h", 'MAX(DAYOFYEAR(orders.ordered_at)) AS doy',
    ];
    const columns = ['paid', 'paid_count', 'nvl', 'ifnull', 'with_amount', 'not_hundred', 'y', 'q', 'm', 'days', 'h', 'doy'];
    // Amounts 100, 200, 50, 300, 70, 20 and NULL; six paid; days 15 + 3 + 20 + 10 + 11 + 1 + 2; 2024-05-02 is day 123.
    assert.equal(await rows(service, { measures }, columns), [[690, 6, 741, 741, 6, 5, 2024, 2, 1, 62, 10, 123]]);
    const zero = await rows(service, { measures: ['AVG(ZEROIFNULL(orders.amount)) AS average'] }, ['average']);
    assert.is(Math.round((zero[0]?.[0] as number) * 100), 10571);
    // String search: six paid orders contain 'ai', one cancelled starts with 'can' and ends with 'led'; 'i' is third in 'paid'.
    const search = [
      "SUM(IFF(CONTAINS(orders.status, 'ai'), 1, 0)) AS c", "SUM(IFF(STARTSWITH(orders.status, 'can'), 1, 0)) AS s", "SUM(IFF(ENDSWITH(orders.status, 'led'), 1, 0)) AS e",
      "MAX(POSITION('i' IN orders.status)) AS p", "MAX(CHARINDEX('l', orders.status)) AS ci",
    ];
    assert.equal(await rows(service, { measures: search }, ['c', 's', 'e', 'p', 'ci']), [[6, 1, 1, 3, 6]]);
    await refused(service, { measures: ['SUM(IFF(orders.amount > 1, 1)) AS x'] }, 'E_INVALID_EXPRESSION');
    await refused(service, { measures: ["MAX(EXTRACT(EPOCH FROM orders.ordered_at)) AS x"] }, 'E_INVALID_EXPRESSION');
  });

  test('a dimension written as a row-level expression over fields, with an alias: grouped by its value (bound literals in it)', async ({ service }) => {
    const body = { dimensions: ["CASE WHEN orders.amount > 100 THEN 'big' ELSE 'small' END AS size", 'YEAR(orders.ordered_at) AS y'], measures: ['order_count', 'revenue'] };
    assert.equal(await rows(service, body, ['size', 'y', 'order_count', 'revenue']), sorted([['big', 2024, 2, 500], ['small', 2024, 5, 240]]));
    await refused(service, { dimensions: ['SUM(orders.amount) AS s'], measures: ['order_count'] }, 'E_INVALID_EXPRESSION');
  });

  test('a dimension-only query lists the values of the dimension\'s own dataset', async ({ service }) => {
    assert.equal(await rows(service, { dimensions: ['customers.region'] }, ['region']), sorted([['EAST'], ['WEST'], ['NORTH'], [null]]));
  });

  test.run();
}
