/**
 * The checks of a semantic query that need no SQL: which clause may hold aggregates, windows and row-level
 * names (OSI Foundation §6.2 A.3, §6.3, D-024), nested windows (D-028), the result's column names, and what a
 * scalar query or an expression dimension may hold. Each refuses with the Foundation's code before any text
 * is written; the compiler calls them as it resolves the query's names.
 */
import { AGGREGATES, childrenOf, isAggregateCall, nodesOf, WINDOW_FUNCTIONS, type Expr } from './expression-ast.js';
import { queryInvalid } from './query-errors.js';

/** What the checks ask of the model and the query: whether a bare name is a metric, a qualified one a dimension. */
export interface QueryNames {
  isMetric(name: string): boolean;
  isDimension(parts: string[]): boolean;
}

/** A name the parser never produces: a structured filter's value (structured-filters.ts). */
function isValue(parts: readonly string[]): boolean {
  return parts[0]?.startsWith('\u0000') === true;
}

/**
 * A window inside a window (its argument, partition or order) has no grain of its own to run at: refused
 * before any SQL is written (Foundation D-028, `E_NESTED_WINDOW`).
 */
export function checkNestedWindows(expression: Expr, target: string): void {
  const visit = (node: Expr, inWindow: boolean): void => {
    const window = node.kind === 'call' && node.window !== undefined;
    if (window && inWindow) throw queryInvalid('E_NESTED_WINDOW', target, `${target}: a window function inside another window function; compute the inner one in a field, or as a measure of its own`);
    for (const child of childrenOf(node)) visit(child, inWindow || window);
  };
  visit(expression, false);
}

export function hasWindow(expression: Expr): boolean {
  return [...nodesOf(expression)].some((node) => node.kind === 'call' && node.window !== undefined);
}

/** Two columns of a result may not share a name (compared without case). */
export function checkColumnNames(names: readonly string[]): void {
  const taken = new Set<string>();
  for (const name of names) {
    if (taken.has(name.toLowerCase())) throw queryInvalid('E_NAME_COLLISION', name, `two columns of the result are named ${name}: give one an alias`);
    taken.add(name.toLowerCase());
  }
}

/** The where clause is at row level (§6.2 A.3): no aggregate, no metric, no window. */
export function checkWhere(expression: Expr, target: string, names: QueryNames): void {
  let aggregate = false;
  let row = false;
  let window = false;
  const visit = (node: Expr, inAggregate: boolean): void => {
    if (node.kind === 'call' && node.window) window = true;
    if (isAggregateCall(node)) aggregate = true;
    if (node.kind === 'name' && !isValue(node.parts)) {
      if (node.parts.length === 1 && names.isMetric(node.parts[0] as string)) aggregate = true;
      else if (!inAggregate) row = true;
    }
    for (const child of childrenOf(node)) visit(child, inAggregate || isAggregateCall(node));
  };
  visit(expression, false);
  if (window) throw queryInvalid('E_WINDOW_IN_WHERE', target, `${target}: a window function cannot filter rows before aggregation; use having, or a field that holds the window`);
  if (aggregate && row) throw queryInvalid('E_MIXED_PREDICATE_LEVEL', target, `${target} mixes row-level terms with aggregates: put the aggregate part in having`);
  if (aggregate) throw queryInvalid('E_AGGREGATE_IN_WHERE', target, `${target} aggregates (or names a metric): where filters rows before aggregation; use having`);
}

/** A result column as having sees it: a dimension's, or one holding a window (computed after having). */
export interface ResultColumn {
  name: string;
  windowed?: boolean | undefined;
  dimension: boolean;
}

/** Having filters groups (§6.3): aggregates, metrics, result columns and dimensions, never a bare row-level name. */
export function checkHaving(expression: Expr, target: string, columns: readonly ResultColumn[], names: QueryNames): void {
  let aggregate = false;
  let row = false;
  const visit = (node: Expr): void => {
    if (isAggregateCall(node) || (node.kind === 'call' && node.window)) {
      aggregate = true;
      return;
    }
    if (node.kind === 'name' && !isValue(node.parts)) {
      if (node.parts.length === 1) {
        const column = columns.find((candidate) => candidate.name.toLowerCase() === (node.parts[0] as string).toLowerCase());
        if (column?.windowed) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${column.name} holds a window function, computed after having; write the window in having itself`);
        if (!column?.dimension) aggregate = true;
      } else if (!names.isDimension(node.parts)) row = true;
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(expression);
  if (row && aggregate) throw queryInvalid('E_MIXED_PREDICATE_LEVEL', target, `${target} mixes row-level terms with aggregates: put the row-level part in where`);
  if (row) throw queryInvalid('E_NON_AGGREGATE_IN_HAVING', target, `${target} filters rows, not groups: put it in where`);
}

/** A measure's row-level names are inside aggregates, or dimensions of the query (D-024). */
export function checkMeasure(expression: Expr, target: string, names: QueryNames): void {
  const visit = (node: Expr): void => {
    if (isAggregateCall(node)) return;
    if (node.kind === 'name' && node.parts.length > 1 && !names.isDimension(node.parts)) {
      throw queryInvalid('E_UNAGGREGATED_FINER_GRAIN_REFERENCE', target, `${target}: ${node.parts.join('.')} is a row-level field outside any aggregate; wrap it in one (SUM, COUNT, ...) or group by it`);
    }
    for (const child of childrenOf(node)) visit(child);
  };
  visit(expression);
}

/** A scalar query's field aggregates nothing and names no metric (§5.1.2). */
export function checkScalarField(expression: Expr, target: string, names: QueryNames): void {
  for (const node of nodesOf(expression)) {
    const metric = node.kind === 'name' && node.parts.length === 1 && names.isMetric(node.parts[0] as string);
    if (metric || isAggregateCall(node)) throw queryInvalid('E_AGGREGATE_IN_SCALAR_QUERY', target, `${target} aggregates (or names a metric): a scalar query has no aggregation; ask with dimensions and measures`);
  }
}

/** A dimension written as an expression is row-level: no aggregate, metric or window. */
export function checkExpressionDimension(expression: Expr, target: string, names: QueryNames): void {
  for (const node of nodesOf(expression)) {
    const metric = node.kind === 'name' && node.parts.length === 1 && names.isMetric(node.parts[0] as string);
    if (metric || isAggregateCall(node) || (node.kind === 'call' && node.window)) {
      throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a dimension is row-level; it cannot aggregate, name a metric or hold a window`);
    }
  }
}

/** Conditional forms every dialect has, whether or not its allow-list names them (they are syntax in PostgreSQL). */
const CORE_SCALARS: ReadonlySet<string> = new Set(['coalesce', 'nullif', 'greatest', 'least']);

/**
 * The allow-list of a call that is not an aggregate at the query's grain: known aggregates (over a window
 * here), window functions, and the dialect's scalar built-ins (`allowed`, its function policy).
 */
export function checkAllowed<R>(call: Extract<Expr<R>, { kind: 'call' }>, allowed: ReadonlySet<string>, target: string): void {
  if (WINDOW_FUNCTIONS.has(call.name) || AGGREGATES.has(call.name)) {
    if (!call.window) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} needs an OVER clause`);
    return;
  }
  if (call.window) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} is no window function`);
  if (call.star || call.distinct) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: * and DISTINCT belong in an aggregate`);
  if (!CORE_SCALARS.has(call.name) && !allowed.has(call.name)) {
    throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: the function ${call.name} is not allowed`);
  }
}
