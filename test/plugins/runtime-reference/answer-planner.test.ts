import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AuthorizedContext } from '../../../core/plugin-api/task-documents.js';
import { planAnswer, type AnswerPlan } from '../../../plugins/runtime-reference/answer-planner.js';
import { wordsOf } from '../../../plugins/runtime-reference/goal-terms.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { retailContext } from './reference-fixtures.js';

interface Context {
  retail: AuthorizedContext;
}

const planner = suite<Context>('reference runtime: answer planner on the demo package', { retail: undefined as unknown as AuthorizedContext });

planner.before(async (context) => {
  context.retail = await retailContext();
});

function metricSql(retail: AuthorizedContext, name: string): string {
  const metric = retail.semantic?.metrics.find((candidate) => candidate.name === name);
  if (!metric) throw new Error(`no metric ${name}`);
  return metric.sql;
}

function sqlOf(plan: AnswerPlan): string {
  if (plan.kind !== 'query') throw new Error(`expected a query, got ${JSON.stringify(plan)}`);
  return plan.sql;
}

planner('a metric by a dimension on another dataset: the join follows the relationship, output named after field and metric', ({ retail }) => {
  const plan = planAnswer('revenue by region', retail);
  assert.equal(plan, {
    kind: 'query',
    subject: 'revenue by region',
    notes: [],
    sql: [
      `SELECT "customers"."region" AS "region", ${metricSql(retail, 'revenue')} AS "revenue"`,
      'FROM "sales"."orders" AS "orders"',
      'LEFT JOIN "sales"."customers" AS "customers" ON "orders"."customer_id" = "customers"."id"',
      'GROUP BY "customers"."region"',
      'ORDER BY "revenue" DESC',
    ].join('\n'),
  });
});

planner('semantic goals are compiled for PostgreSQL only; on another family a SELECT goal still runs', ({ retail }) => {
  const mysql = { ...retail, sqlFamily: 'mysql' as const };
  const plan = planAnswer('revenue by region', mysql);
  assert.is(plan.kind, 'input_required');
  assert.is(planAnswer('select 1', mysql).kind, 'query');
});

planner('synonyms match as well as names: multi-word, any case, plural', ({ retail }) => {
  assert.is(sqlOf(planAnswer('Total Sales by territories', retail)), sqlOf(planAnswer('revenue by region', retail)));
  assert.is(sqlOf(planAnswer('turnover per area', retail)), sqlOf(planAnswer('revenue by region', retail)));
});

planner('the longest phrase wins: "total sales" is revenue, not the field total and the metric sales', ({ retail }) => {
  const sql = sqlOf(planAnswer('total sales', retail));
  assert.not.match(sql, '"orders"."total" AS');
  assert.is(sql, `SELECT ${metricSql(retail, 'revenue')} AS "revenue"\nFROM "sales"."orders" AS "orders"`);
});

planner('a dimension two relationships away is joined through the dataset between', ({ retail }) => {
  const sql = sqlOf(planAnswer('units sold by region', retail));
  assert.match(sql, [
    'FROM "sales"."order_lines" AS "order_lines"',
    'LEFT JOIN "sales"."orders" AS "orders" ON "order_lines"."order_id" = "orders"."id"',
    'LEFT JOIN "sales"."customers" AS "customers" ON "orders"."customer_id" = "customers"."id"',
    'GROUP BY "customers"."region"',
  ].join('\n'));
});

planner('a metric\'s own join is used as the package wrote it, and not repeated for a dimension on that dataset', ({ retail }) => {
  const sql = sqlOf(planAnswer('ARPC by region', retail));
  assert.match(sql, 'FROM "sales"."orders" AS "orders"\nJOIN "sales"."customers" AS "customers" ON "orders"."customer_id" = "customers"."id"\nGROUP BY');
  assert.is(sql.split('"sales"."customers"').length, 2);
});

planner('an ambiguous field name means the field nearest to the metric\'s dataset', ({ retail }) => {
  assert.match(sqlOf(planAnswer('order count by name', retail)), 'SELECT "customers"."name" AS "name"');
  assert.match(sqlOf(planAnswer('units sold by name', retail)), 'SELECT "products"."name" AS "name"');
});

planner('two fields of the same name get distinct output names', ({ retail }) => {
  assert.match(sqlOf(planAnswer('units sold by customer name and product name', retail)), 'SELECT "customers"."name" AS "name", "products"."name" AS "products_name"');
});

planner('dimensions without a metric list their distinct values, in order', ({ retail }) => {
  assert.is(sqlOf(planAnswer('which regions are there?', retail)), [
    'SELECT "customers"."region" AS "region"', 'FROM "sales"."customers" AS "customers"', 'GROUP BY "customers"."region"', 'ORDER BY "customers"."region"',
  ].join('\n'));
});

planner('a dimension no many-to-one path reaches needs input: joining it would repeat the metric\'s rows', ({ retail }) => {
  const plan = planAnswer('revenue by product category', retail);
  assert.is(plan.kind, 'input_required');
  if (plan.kind !== 'input_required') return;
  assert.is(plan.detail, 'category (of products) cannot be combined with revenue: no many-to-one relationship leads from orders to products');
  assert.match(plan.answer, 'Category (of products) cannot be combined with revenue');
});

planner('metrics on different base datasets are not combined: the first one\'s base wins and the others are noted', ({ retail }) => {
  const plan = planAnswer('revenue and units sold by region', retail);
  assert.is(plan.kind, 'query');
  if (plan.kind !== 'query') return;
  assert.is(plan.subject, 'revenue by region');
  assert.equal(plan.notes, ['units_sold is left out: it is measured on order_lines, not on orders; ask for it separately']);
});

planner('a goal that is a SELECT or WITH statement runs as written, trimmed', ({ retail }) => {
  assert.equal(planAnswer('  select count(*) AS n from sales.orders \n', retail), { kind: 'query', sql: 'select count(*) AS n from sales.orders', subject: 'your query', notes: [] });
  assert.is(sqlOf(planAnswer('WITH t AS (SELECT 1 AS one) SELECT one FROM t', retail)), 'WITH t AS (SELECT 1 AS one) SELECT one FROM t');
  // A question that merely begins with the letters is no statement.
  assert.match(sqlOf(planAnswer('selection of revenue', retail)), 'AS "revenue"');
});

planner('nothing matched: input required, listing the metrics and dimensions the model has', ({ retail }) => {
  const plan = planAnswer('what is the weather like?', retail);
  assert.is(plan.kind, 'input_required');
  if (plan.kind !== 'input_required') return;
  assert.match(plan.detail, /^the goal names no metric or field of the semantic model; it knows the metrics .*\brevenue\b.* and the dimensions /);
  assert.match(plan.detail, 'customers.region');
  assert.match(plan.answer, '- order_count');
  assert.match(plan.answer, '- orders.ordered_at');
});

planner('without a semantic model only a SELECT goal can be answered', ({ retail }) => {
  const plan = planAnswer('revenue by region', { ...retail, semantic: null });
  assert.is(plan.kind, 'input_required');
  if (plan.kind === 'input_required') assert.match(plan.detail, 'VDB retail version 1 has no active semantic model');
  assert.is(planAnswer('select 1', { ...retail, semantic: null }).kind, 'query');
});

planner('no data access fails the task, even for a SELECT goal', ({ retail }) => {
  const plan = planAnswer('select 1', { ...retail, access: 'unavailable' });
  assert.equal(plan, { kind: 'failed', detail: 'the caller has no data access to VDB retail version 1 (access: unavailable), so there is nothing the task may read' });
});

planner('every compiled query runs on the demo database', async ({ retail }) => {
  const goals = [
    'revenue by region', 'units sold by region', 'ARPC by region', 'order count by name', 'units sold by customer name and product name',
    'which regions are there?', 'AOV by status', 'product sales by product category and order date', 'customer count by signup date',
  ];
  const database = await sharedPglite();
  for (const goal of goals) {
    const result = await database.query(sqlOf(planAnswer(goal, retail)), [], { maxRows: 5 });
    assert.ok(result.rows.length > 0, goal);
  }
});

planner('words fold case, punctuation, underscores and plurals', () => {
  assert.equal(wordsOf('Order_Count by Categories, Regions & status?'), ['order', 'count', 'by', 'category', 'region', 'status']);
});

planner.run();
