import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SemanticQuery } from '../../../core/plugin-api/semantic-query.js';
import type { AuthorizedContext } from '../../../core/plugin-api/task-documents.js';
import { planAnswer, type AnswerPlan } from '../../../plugins/runtime-reference/answer-planner.js';
import { wordsOf } from '../../../plugins/runtime-reference/goal-terms.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { compiledDemoQuery, retailContext } from './reference-fixtures.js';

interface Context {
  retail: AuthorizedContext;
}

const planner = suite<Context>('reference runtime: answer planner on the demo package', { retail: undefined as unknown as AuthorizedContext });

planner.before(async (context) => {
  context.retail = await retailContext();
});

function queryOf(plan: AnswerPlan): SemanticQuery {
  if (plan.kind !== 'semanticQuery') throw new Error(`expected a semantic query, got ${JSON.stringify(plan)}`);
  return plan.query;
}

planner('a metric by a dimension becomes a semantic query: the metric a measure, the field a dimension, ordered by the metric', ({ retail }) => {
  assert.equal(planAnswer('revenue by region', retail), {
    kind: 'semanticQuery',
    subject: 'revenue by region',
    notes: [],
    query: { dimensions: [{ field: 'customers.region' }], measures: [{ metric: 'revenue' }], orderBy: [{ field: 'revenue', direction: 'desc' }] },
  });
});

planner('"revenue by region for paid orders by month": a value the field\'s description lists filters, a grain word buckets the metric\'s time field', ({ retail }) => {
  const plan = planAnswer('revenue by region for paid orders by month', retail);
  assert.equal(queryOf(plan), {
    dimensions: [{ field: 'customers.region' }, { field: 'orders.ordered_at', grain: 'month', alias: 'month' }],
    measures: [{ metric: 'revenue' }],
    where: [{ field: 'orders.status', operator: 'in', values: ['paid'] }],
    orderBy: [{ field: 'revenue', direction: 'desc' }],
  });
  assert.is(plan.kind === 'semanticQuery' && plan.subject, 'revenue by region, month for status paid');
});

planner('semantic goals plan the same whatever the SQL family: the service compiles per dialect', ({ retail }) => {
  const mysql = { ...retail, sqlFamily: 'mysql' as const };
  assert.equal(planAnswer('revenue by region', mysql), planAnswer('revenue by region', retail));
  assert.is(planAnswer('select 1', mysql).kind, 'query');
});

planner('synonyms match as well as names: multi-word, any case, plural', ({ retail }) => {
  assert.equal(queryOf(planAnswer('Total Sales by territories', retail)), queryOf(planAnswer('revenue by region', retail)));
  assert.equal(queryOf(planAnswer('turnover per area', retail)), queryOf(planAnswer('revenue by region', retail)));
});

planner('the longest phrase wins: "total sales" is revenue, not the field total and the metric sales', ({ retail }) => {
  assert.equal(queryOf(planAnswer('total sales', retail)), { dimensions: [], measures: [{ metric: 'revenue' }], orderBy: [{ field: 'revenue', direction: 'desc' }] });
});

planner('an ambiguous field name means the field nearest to the metric\'s dataset', ({ retail }) => {
  assert.equal(queryOf(planAnswer('order count by name', retail)).dimensions, [{ field: 'customers.name' }]);
  assert.equal(queryOf(planAnswer('units sold by name', retail)).dimensions, [{ field: 'products.name' }]);
});

planner('metrics of different datasets are asked together: the compiler aggregates each apart and stitches them', ({ retail }) => {
  const plan = planAnswer('revenue and units sold by region', retail);
  assert.equal(queryOf(plan).measures, [{ metric: 'revenue' }, { metric: 'units_sold' }]);
  assert.is(plan.kind === 'semanticQuery' && plan.subject, 'revenue, units_sold by region');
});

planner('dimensions without a metric list their values, in order', ({ retail }) => {
  assert.equal(queryOf(planAnswer('which regions are there?', retail)), { dimensions: [{ field: 'customers.region' }], measures: [], orderBy: [{ field: 'region', direction: 'asc' }] });
});

planner('a goal that is a SELECT or WITH statement runs as written, trimmed', ({ retail }) => {
  assert.equal(planAnswer('  select count(*) AS n from sales.orders \n', retail), { kind: 'query', sql: 'select count(*) AS n from sales.orders', subject: 'your query', notes: [] });
  assert.equal(planAnswer('WITH t AS (SELECT 1 AS one) SELECT one FROM t', retail).kind, 'query');
  // A question that merely begins with the letters is no statement.
  assert.is(planAnswer('selection of revenue', retail).kind, 'semanticQuery');
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

planner('every planned query compiles and runs on the demo database', async ({ retail }) => {
  const goals = [
    'revenue by region', 'units sold by region', 'ARPC by region', 'order count by name', 'units sold by customer name and product name',
    'which regions are there?', 'AOV by status', 'product sales by product category and order date', 'customer count by signup date',
    'revenue by region for paid orders by month', 'revenue and units sold by region', 'revenue by product category',
  ];
  const database = await sharedPglite();
  for (const goal of goals) {
    const { sql, params } = await compiledDemoQuery(queryOf(planAnswer(goal, retail)));
    const result = await database.query(sql, params, { maxRows: 5 });
    assert.ok(result.rows.length > 0, goal);
  }
});

planner('words fold case, punctuation, underscores and plurals', () => {
  assert.equal(wordsOf('Order_Count by Categories, Regions & status?'), ['order', 'count', 'by', 'category', 'region', 'status']);
});

planner.run();
