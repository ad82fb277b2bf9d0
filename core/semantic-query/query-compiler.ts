/**
 * Compiles a semantic query against one package to one SQL statement: resolves its names against the model
 * (fields, metrics, columns; query-resolution.ts), has each clause checked (query-validation.ts), builds the
 * plan (query-plan.ts: typed data, no SQL text: resolved expressions, dimensions, aggregates at their homes,
 * groups, joins) and has the writer write the statement from it for the dialect (sql-writer.ts, the one
 * module that writes SQL text). It follows the OSI Foundation's evaluation
 * algorithm (§6.2 A; decisions in docs/semantic-query.md):
 * - each aggregate of a measure or of a model metric is computed at the query's dimensions from its home
 *   dataset (the one its fields are reached from along many-to-one relationships; `COUNT(*)` takes the other
 *   aggregates' home), LEFT-joined outward so orphan facts fall in the NULL group (§6.6); aggregates of one
 *   home share one grouped subquery, and arithmetic over aggregates is applied after (§4.5 form 2);
 * - where a dimension or filter lies on the many side of the home (a bridge, or a finer dataset), the home's
 *   rows are first de-duplicated per (key, group key), so a row counts once per group (§6.8.1);
 * - subqueries of different homes are stitched on the dimensions: the union of their keys, then a NULL-safe
 *   LEFT JOIN of each (a FULL OUTER JOIN that PGlite and MySQL cannot run), so no fact loses a group (§6.7);
 * - measure expressions, `having` and `orderBy` are evaluated over the stitched rows.
 */
import type { SemanticQuery } from '../plugin-api/semantic-query.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { Expr } from './expression-ast.js';
import { parseExpression } from './expression-parser.js';
import type { JoinPlanner } from './join-planner.js';
import type { ModelIndex, ResolvedField } from './model-index.js';
import { queryInvalid } from './query-errors.js';
import { groupJoins, scalarHome, scalarJoins, type AggregationPlan, type ColumnReference, type Output, type QueryPlan, type Reads, type ScalarPlan } from './query-plan.js';
import { QueryResolution, type ResolvedOutput } from './query-resolution.js';
import { checkColumnNames, checkHaving, checkNestedWindows, checkScalarField, hasWindow } from './query-validation.js';
import { writeStatement, type ParamSource } from './sql-writer.js';

/** A query compiled: its statement, where each bound value comes from, and what the caller's grants must cover. */
export interface CompiledQuery {
  sql: string;
  params: ParamSource[];
  /** The datasources it reads: one runs it; several federate it (docs/federation.md), its SQL in PostgreSQL's dialect. */
  datasources: string[];
  /** The result's columns, in order. */
  columns: string[];
  /** Every column the statement reads, per dataset: what the caller's grants must cover. */
  reads: Reads;
  /**
   * The columns an aggregate of the query reads that no field names: one the caller may not read is refused
   * as a name that does not exist (`refusal`), so nothing tells it from one that does not.
   */
  columnReferences: ColumnReference[];
}

export function compileQuery(model: ModelIndex, planner: JoinPlanner, dialect: SqlDialect, query: SemanticQuery): CompiledQuery {
  const plan = planQuery(model, planner, dialect.functionPolicy.allowed, query);
  const { sql, params } = writeStatement(plan, dialect);
  return { sql, params, datasources: plan.datasources, columns: plan.outputs.map((output) => output.name), reads: plan.reads, columnReferences: plan.columnReferences };
}

/** A query's plan: its names resolved and checked, as data; `functions`: the scalar functions it may call. */
export function planQuery(model: ModelIndex, planner: JoinPlanner, functions: ReadonlySet<string>, query: SemanticQuery): QueryPlan {
  const resolution = new QueryResolution(model, planner, functions);
  return query.fields ? scalarQuery(resolution, query, query.fields) : aggregationQuery(resolution, query);
}

/** A result's column as the plan holds it. */
const outputOf = ({ name, value, target }: Output): Output => ({ name, value, target });

/** An aggregation query (§5.1.1, §6.2 A): its dimensions and measures at their homes, stitched, then having and order. */
function aggregationQuery(resolution: QueryResolution, query: SemanticQuery): AggregationPlan {
  query.dimensions.forEach((dimension, index) => resolution.addDimension(dimension.field, dimension.grain, dimension.alias, index));
  const where = resolution.predicate(query.where, 'where');
  const outputs: ResolvedOutput[] = [
    ...resolution.dimensions.map((dimension) => ({ name: dimension.output, value: resolution.dimensionRef(dimension), target: dimension.output })),
    ...query.measures.map((measure, index) => resolution.measureOutput(measure, index)),
  ];
  checkColumnNames(outputs.map((output) => output.name));
  const finalLevel = resolution.finalResolver(outputs);
  // Resolving having and orderBy may add aggregates, so the groups are formed after them.
  const havingExpressions = resolution.predicateExpressions(query.having, 'having');
  for (const { expression, target } of havingExpressions) {
    checkNestedWindows(expression, target);
    resolution.checkRowWindows(expression, target);
    const columns = outputs.map((output) => ({ name: output.name, windowed: output.windowed, dimension: resolution.dimensions.some((dimension) => dimension.output === output.name) }));
    checkHaving(expression, target, columns, resolution.names);
  }
  const orderTerms = query.orderBy.map((order, index) => ({ order, target: `orderBy[${index}]`, output: outputs.find((output) => output.name.toLowerCase() === order.field.toLowerCase()) }));
  const orderExpressions = orderTerms.map(({ order, target, output }) => (output ? undefined : parseExpression(order.field, target)));
  orderExpressions.forEach((expression, index) => {
    if (!expression) return;
    checkNestedWindows(expression, orderTerms[index]?.target as string);
    resolution.checkRowWindows(expression, orderTerms[index]?.target as string);
  });
  const having = havingExpressions.map(({ expression, target }) => ({ value: resolution.resolve(expression, finalLevel, target), target }));
  const order = orderTerms.map(({ order, target, output }, index) => ({
    value: output ? output.value : resolution.resolve(orderExpressions[index] as Expr, finalLevel, target), target, direction: order.direction, nulls: order.nulls,
  }));
  resolution.formGroups();
  const joinInputs = resolution.joinInputs(resolution.whereFields.flatMap((field) => field.needs));
  for (const group of resolution.groups) group.joins = groupJoins(group, joinInputs);
  return {
    kind: 'aggregation', dimensions: resolution.dimensions, groups: resolution.groups, where, outputs: outputs.map(outputOf), having,
    // A window in having (§6.10.1 "Having: yes, over the post-GROUP BY row set") filters a derived table.
    relay: havingExpressions.some(({ expression }) => hasWindow(expression)),
    order, limit: query.limit !== undefined, offset: query.offset !== undefined,
    datasources: resolution.datasources(), reads: resolution.reads, columnReferences: resolution.columnReferences,
  };
}

/**
 * A scalar query (§5.1.2, §6.2 B): one row per row of the home dataset, the dataset every other one is
 * reached from many-to-one (or one-to-one); anything that would repeat its rows is `E_FAN_OUT_IN_SCALAR_QUERY`.
 */
function scalarQuery(resolution: QueryResolution, query: SemanticQuery, fields: NonNullable<SemanticQuery['fields']>): ScalarPlan {
  const where = resolution.predicate(query.where, 'where');
  const projected: ResolvedField[] = [];
  const taken = new Set<string>();
  const outputs = fields.map((entry, index): Output => {
    const target = `fields[${index}]`;
    const expression = 'field' in entry ? { kind: 'name' as const, parts: entry.field.split('.') } : parseExpression(entry.expression, target);
    checkNestedWindows(expression, target);
    checkScalarField(expression, target, resolution.names);
    const value = resolution.resolve(expression, resolution.rowLevel(projected, target), target);
    // As for dimensions: the leaf name, with the dataset's in front when another column has it.
    const leaf = 'field' in entry ? (entry.field.split('.').at(-1) as string) : `field_${index + 1}`;
    const name = entry.alias ?? (taken.has(leaf.toLowerCase()) && 'field' in entry ? entry.field.split('.').slice(-2).join('_') : leaf);
    if (taken.has(name.toLowerCase())) throw queryInvalid('E_NAME_COLLISION', name, `two columns of the result are named ${name}: give one an alias`);
    taken.add(name.toLowerCase());
    return { name, value, target };
  });
  const used = [...projected, ...resolution.whereFields];
  const order = query.orderBy.map((entry, index) => {
    const target = `orderBy[${index}]`;
    const output = outputs.find((candidate) => candidate.name.toLowerCase() === entry.field.toLowerCase());
    const value = output ? output.value : resolution.resolve(parseExpression(entry.field, target), resolution.rowLevel(used, target), target);
    return { value, target, direction: entry.direction, nulls: entry.nulls };
  });
  // The home is the dataset of the fields (§5.1.2 "whose row-level fields drive the projection"); a filter or
  // order on a dataset it reaches only one-to-many would repeat its rows (checked with the joins below).
  const home = scalarHome([...new Set((projected.length > 0 ? projected : used).flatMap((field) => field.datasets))], resolution.planner);
  resolution.groups = [{ alias: 'g0', home, aggregates: [] }];
  const joins = scalarJoins(home, used.flatMap((field) => field.needs), resolution.joinInputs([]));
  return {
    kind: 'scalar', home, joins, where, outputs, order, limit: query.limit !== undefined, offset: query.offset !== undefined,
    datasources: resolution.datasources(), reads: resolution.reads, columnReferences: resolution.columnReferences,
  };
}
