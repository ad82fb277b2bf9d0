import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { SemanticPackage } from '../../../core/plugin-api/semantic-package.js';
import type { SemanticQuery } from '../../../core/plugin-api/semantic-query.js';
import { JoinPlanner } from '../../../core/semantic-query/join-planner.js';
import { ModelIndex } from '../../../core/semantic-query/model-index.js';
import { compileQuery, planQuery } from '../../../core/semantic-query/query-compiler.js';
import { coreTokens } from '../../../core/service-tokens.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { demoConfig, startTestService } from '../../support/test-service.js';
import { seedStatements, shapesBundle, VDB } from './shapes-fixtures.js';

/**
 * The plan of a semantic query is data (docs/semantic-query.md, "How a query is computed"): it refers to the
 * model's objects, and holds nothing else than values (no function, no SQL text of its own); the writer alone
 * writes the statement. Planned for SQL Server, whose quoted names (`[x]`) no package text holds (the package
 * is compiled for PGlite), so a `[name]` in the plan would be text the compiler wrote into it.
 */
const test = suite<{ pkg: SemanticPackage; model: ModelIndex; planner: JoinPlanner }>('semantic query plan');
test.before(async (context) => {
  const raw = await sharedPglite();
  for (const statement of ['create schema if not exists semshapes_plan', ...seedStatements({ timestamp: 'timestamp' }, (table) => `semshapes_plan.${table}`)]) await raw.query(statement, []);
  const config = demoConfig({ descriptors: './bundle', datasources: { shapes_db: { adapter: 'pglite' } } });
  const files = shapesBundle('semshapes_plan', 'shapes_db');
  files['bundle/vdbs/shapes.yaml'] = (files['bundle/vdbs/shapes.yaml'] as string).replace(/dataRoles:[\s\S]*$/, '');
  const service = await startTestService({ config, files, datasources: { shapes_db: raw } });
  const pkg = service.container.resolve(coreTokens.semantic).packageOf(VDB, '1')?.document;
  await service.close();
  await raw.query('drop schema if exists semshapes_plan cascade', []);
  if (!pkg) throw new Error('the fixture model did not activate');
  context.pkg = pkg;
  context.model = new ModelIndex(pkg);
  context.planner = new JoinPlanner(context.model);
});

const QUERIES: Record<string, SemanticQuery> = {
  'two facts stitched, a where, an order, a limit': {
    dimensions: [{ field: 'customers.region' }], measures: [{ metric: 'revenue' }, { metric: 'returned' }],
    where: "customers.region <> 'EAST'", orderBy: [{ field: 'region', direction: 'desc' }], limit: 10,
  },
  'a time grain, an expression dimension, an expression measure with literals, a having, an offset': {
    dimensions: [{ field: 'orders.ordered_at', grain: 'month', alias: 'month' }, { field: "COALESCE(customers.region, 'none')", alias: 'area' }],
    measures: [{ expression: 'SUM(orders.amount * 2) / NULLIF(COUNT(*), 0)', alias: 'per_row' }, { metric: 'revenue' }],
    having: 'revenue > 1', orderBy: [{ field: 'per_row', direction: 'asc' }], limit: 5, offset: 1,
  },
  'a window over the merged rows, and in having': {
    dimensions: [{ field: 'customers.region' }],
    measures: [{ metric: 'revenue' }, { expression: 'RANK() OVER (ORDER BY SUM(orders.amount) DESC)', alias: 'place' }],
    having: 'RANK() OVER (ORDER BY SUM(orders.amount) DESC) <= 2', orderBy: [],
  },
  'a structured filter': {
    dimensions: [{ field: 'customers.region' }], measures: [{ metric: 'revenue' }],
    where: [{ field: 'customers.region', operator: 'startsWith', values: ['WE'] }], orderBy: [],
  },
  'a scalar query': {
    dimensions: [], measures: [], fields: [{ field: 'orders.amount' }, { expression: "orders.amount + 1", alias: 'more' }],
    where: 'orders.amount > 0', orderBy: [{ field: 'more', direction: 'desc' }], limit: 3,
  },
};

/** Every object reachable from the model: the plan may refer to these, and to every string they hold. */
function modelParts(pkg: SemanticPackage): { objects: Set<object>; strings: Set<string> } {
  const objects = new Set<object>();
  const strings = new Set<string>();
  const visit = (value: unknown): void => {
    if (typeof value === 'string') strings.add(value);
    if (typeof value !== 'object' || value === null || objects.has(value)) return;
    objects.add(value);
    for (const child of Object.values(value)) visit(child);
  };
  visit(pkg);
  return { objects, strings };
}

/** What in the plan is not data, or is SQL text the compiler wrote: each with its path. */
function notData(plan: unknown, model: { objects: Set<object>; strings: Set<string> }): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  // SQL Server's quoted names, the statement's keywords, a bound value's placeholder or marker.
  const sqlText = /\[[A-Za-z_]\w*\]|\b(?:SELECT|FROM|JOIN|WHERE|GROUP BY|ORDER BY|CASE WHEN)\b|OVER \(|COALESCE\(|[?\u0001]/;
  const visit = (value: unknown, path: string): void => {
    if (typeof value === 'function') found.push(`${path}: a function`);
    if (typeof value === 'string' && !model.strings.has(value) && sqlText.test(value)) found.push(`${path}: ${JSON.stringify(value)}`);
    if (typeof value !== 'object' || value === null || model.objects.has(value) || seen.has(value)) return;
    seen.add(value);
    const prototype = Object.getPrototypeOf(value);
    if (value instanceof Map) [...value].forEach(([key, entry], index) => { visit(key, `${path}.key${index}`); visit(entry, `${path}.${index}`); });
    else if (value instanceof Set) [...value].forEach((entry, index) => visit(entry, `${path}.${index}`));
    else if (prototype !== Object.prototype && prototype !== Array.prototype) found.push(`${path}: an instance of ${prototype?.constructor?.name}`);
    else for (const [key, entry] of Object.entries(value)) visit(entry, `${path}.${key}`);
  };
  visit(plan, 'plan');
  return found;
}

for (const [name, query] of Object.entries(QUERIES)) {
  test(`${name}: the plan is data, with no SQL text; the writer writes it`, ({ pkg, model, planner }) => {
    const plan = planQuery(model, planner, FAMILY_DIALECTS.mssql.functionPolicy.allowed, query);
    assert.equal(notData(plan, modelParts(pkg)), []);
    // Data: a structured clone of it is the same plan.
    assert.equal(structuredClone(plan).kind, plan.kind);
    assert.match(compileQuery(model, planner, FAMILY_DIALECTS.mssql, query).sql, /\[/);
  });
}

/** The code of the refusal `run` throws, or undefined when it throws none. */
function osiCodeOf(run: () => unknown): unknown {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { details?: Record<string, unknown> }).details?.['osiCode'];
  }
}

test('in a query a bare name is a metric (Foundation §4.6.4 rule 1): a bare column in an aggregate is E_NAME_NOT_FOUND, even where one dataset has it', ({ model, planner }) => {
  const measure = (expression: string): SemanticQuery => ({ dimensions: [{ field: 'customers.region' }], measures: [{ expression }], orderBy: [] });
  // `status` is a column of orders only; `amount` of orders and returns: neither is a metric.
  assert.is(osiCodeOf(() => planQuery(model, planner, new Set(), measure('COUNT(DISTINCT status)'))), 'E_NAME_NOT_FOUND');
  assert.is(osiCodeOf(() => planQuery(model, planner, new Set(), measure('SUM(amount)'))), 'E_NAME_NOT_FOUND');
  assert.is(osiCodeOf(() => planQuery(model, planner, new Set(), measure('SUM(orders.amount)'))), undefined);
});

test('the check finds SQL text: a string of the writer\'s in a plan is reported', ({ pkg }) => {
  assert.equal(notData({ value: 'SUM([orders].[amount])' }, modelParts(pkg)), ['plan.value: "SUM([orders].[amount])"']);
  assert.equal(notData({ value: () => 'x' }, modelParts(pkg)), ['plan.value: a function']);
});

test.run();
