/**
 * The names of a semantic query resolved against the model: dimensions (fields, time grains, expressions),
 * measures (model metrics and expressions, each aggregate at its home and the query's grain), the where
 * clause, and what having and orderBy name; each clause checked as it is resolved (query-validation.ts).
 * What it finds goes into the plan's data (query-plan.ts): dimensions, aggregates, the fields the filters
 * read, the columns read; the writer (sql-writer.ts) writes each name's text as it resolves.
 */
import type { PackageDataset, PackageMetric } from '../plugin-api/semantic-package.js';
import type { QueryPredicate, SemanticQuery } from '../plugin-api/semantic-query.js';
import type { TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import { InputError } from '../plugin-api/errors.js';
import { childrenOf, isAggregateCall, nodesOf, type Expr } from './expression-ast.js';
import { parseExpression } from './expression-parser.js';
import type { JoinPlanner } from './join-planner.js';
import type { Edge, JoinNeed, ModelIndex, ResolvedField } from './model-index.js';
import { modelLiteral } from './model-expressions.js';
import { isWindowedField, windowColumn, windowedMetric } from './model-windows.js';
import { queryInvalid } from './query-errors.js';
import { addReads, datasourceOf, formGroups, homeOf, type Aggregate, type ColumnReference, type Dimension, type Group, type Homes, type JoinContext, type Reads } from './query-plan.js';
import { checkExpressionDimension, checkMeasure, checkNestedWindows, checkWhere, hasWindow, type QueryNames } from './query-validation.js';
import { aggregateRef, dimensionRef, fieldValue, relay, writeAggregateCall, writeExpression, type Grain, type NameResolver, type Relay, type SqlWriter } from './sql-writer.js';
import { filterExpression, filterValue } from './structured-filters.js';

/** A column of the result: its name, and its text at the query's grain once the groups are formed. */
export interface Output {
  name: string;
  sql: () => string;
  /**
   * True when the column holds a window, computed after having (§6.2 A.10): a having naming it would filter
   * on other values than the result shows, so it is refused.
   */
  windowed?: boolean;
}

type WindowCall = Extract<Expr, { kind: 'call' }>;

const TIME_TYPES = new Set(['date', 'timestamp']);

export class QueryResolution {
  readonly dimensions: Dimension[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly resolvedCalls = new Map<Expr, Aggregate>();
  readonly whereFields: ResolvedField[] = [];
  readonly columnReferences: ColumnReference[] = [];
  groups: Group[] = [];
  where = '';
  /** Set once a windowed having's derived table holds the dimensions and aggregates (relayColumns). */
  private relayed = false;

  constructor(
    private readonly model: ModelIndex,
    readonly planner: JoinPlanner,
    readonly writer: SqlWriter,
    /** Every column the statement reads, per dataset (the writer lists them in derived tables). */
    readonly reads: Reads,
  ) {
    this.modelLiteral = modelLiteral(writer.dialect);
  }

  /** What validation asks of the model and the query. */
  readonly names: QueryNames = {
    isMetric: (name) => this.model.metric(name).length > 0,
    isDimension: (parts) => this.dimensionOf(parts) !== undefined,
  };

  /** A model metric's literals are written into the text, as the package writes its expressions. */
  private readonly modelLiteral: NonNullable<NameResolver['literal']>;

  // --- names -------------------------------------------------------------------------------------------

  private field(parts: string[], target: string): ResolvedField {
    const found = this.model.fields(parts);
    if (found.length === 1) return found[0] as ResolvedField;
    if (found.length > 1) throw queryInvalid('E_NAME_COLLISION', target, `${parts.join('.')} names fields of several namespaces: qualify it with the namespace`);
    throw queryInvalid('E_NAME_NOT_FOUND', target, notFound(parts, target));
  }

  /**
   * In an aggregate of the query: a field, else a column of the dataset's relation that no field names (as a
   * model metric may read one). Such a column is checked against the caller's grants as any field's.
   */
  private fieldOrColumn(parts: string[], target: string): ResolvedField {
    if (this.model.fields(parts).length > 0) return this.field(parts, target);
    const column = this.model.column(parts, (dataset, name) => this.writer.column(dataset.alias, name));
    if (!column) return this.field(parts, target);
    this.columnReferences.push({ dataset: column.dataset, column: column.field.name, refusal: { target, message: notFound(parts, target) } });
    return column;
  }

  private metric(name: string, target: string): PackageMetric | undefined {
    const found = this.model.metric(name);
    if (found.length > 1) throw queryInvalid('E_NAME_COLLISION', target, `${name} names metrics of several namespaces: qualify it with the namespace`);
    return found[0];
  }

  private read(field: ResolvedField): void {
    addReads(this.reads, field.dataset, field.field.columns);
    for (const other of field.field.reads ?? []) addReads(this.reads, this.model.dataset(other.dataset), other.columns);
  }

  private readJoins(edges: readonly Edge[]): void {
    for (const edge of edges) {
      addReads(this.reads, edge.from, edge.columns.map(([from]) => from));
      addReads(this.reads, edge.to, edge.columns.map(([, to]) => to));
    }
  }

  joinContext(whereNeeds: JoinNeed[]): JoinContext {
    return { planner: this.planner, reads: this.reads, groups: this.groups, dimensions: this.dimensions, whereNeeds };
  }

  /** How the rows at the query's grain are read, once the groups are formed. */
  private get grain(): Grain {
    return { dimensions: this.dimensions.length, groups: this.groups.length, relayed: this.relayed };
  }

  private fieldSql(field: ResolvedField): string {
    this.read(field);
    if (isWindowedField(field.field)) {
      // Computed at its dataset's grain in a derived table, before the query's joins and filters (§6.10.4);
      // an enriched field its window reads brings its many-to-one joins into that table.
      const edges = field.enrichment;
      this.readJoins(edges);
      return this.writer.column(field.dataset.alias, this.writer.window(field.dataset, field.field.sql, edges, windowColumn(field.field)));
    }
    return fieldValue(field.field);
  }

  // --- dimensions --------------------------------------------------------------------------------------

  addDimension(name: string, grain: TimeGrain | undefined, alias: string | undefined, index: number): void {
    const target = `dimensions[${index}]`;
    const parsed = parseExpression(name, target);
    if (parsed.kind !== 'name' || parsed.parts.length < 2) {
      this.addExpressionDimension(parsed, grain, alias, index);
      return;
    }
    const field = this.field(parsed.parts, target);
    const type = field.field.logicalType;
    if (grain && type !== null && !TIME_TYPES.has(type)) {
      throw queryInvalid('E_INVALID_QUERY', target, `${target}: ${field.name} is ${type}; a time grain needs a date or timestamp field`);
    }
    const base = this.fieldSql(field);
    const sql = grain ? this.writer.syntax.truncateTime(base, grain) : base;
    const plain = grain ? `${field.field.name}_${grain}` : field.field.name;
    const clash = this.dimensions.some((dimension) => dimension.output === plain);
    const output = alias ?? (clash ? `${field.dataset.name}_${plain}` : plain);
    this.dimensions.push({ output, column: `d${index}`, field, grain, sql });
  }

  /**
   * A dimension written as a row-level expression over fields (`DATE_TRUNC('month', orders.ordered_at) AS
   * month`, §5.1.1 "Dimensions: fields used for grouping"): grouped by its value; it joins what its fields
   * need, and a field it reads is not thereby a dimension of the query.
   */
  private addExpressionDimension(expression: Expr, grain: TimeGrain | undefined, alias: string | undefined, index: number): void {
    const target = `dimensions[${index}]`;
    if (grain) throw queryInvalid('E_INVALID_QUERY', target, `${target}: a time grain applies to a field; write the expression with DATE_TRUNC instead`);
    checkExpressionDimension(expression, target, this.names);
    const fields: ResolvedField[] = [];
    const sql = writeExpression(expression, this.writer, this.rowLevel(fields, target), target);
    const [first] = fields;
    if (!first) throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field: a dimension groups by a field or an expression over fields`);
    // Its own field identity, so that naming one of its fields elsewhere in the query does not mean this dimension.
    const field: ResolvedField = {
      ...first, field: { ...first.field }, name: `dimension_${index + 1}`,
      datasets: [...new Set(fields.flatMap((read) => read.datasets))], needs: [...new Set(fields.flatMap((read) => read.needs))],
    };
    const output = alias ?? `dimension_${index + 1}`;
    this.dimensions.push({ output, column: `d${index}`, field, grain: undefined, sql });
  }

  dimensionRef(dimension: Dimension): string {
    return dimensionRef(this.writer, dimension, this.grain);
  }

  /**
   * The columns of the derived table a windowed having filters: every dimension and aggregate at the query's
   * grain, and each having term; from then on, dimensions and aggregates are read from it.
   */
  relayColumns(having: string[]): Relay {
    const written = relay(this.writer, this.dimensions, [...this.aggregates.values()], having, this.grain);
    this.relayed = true;
    return written;
  }

  // --- where -------------------------------------------------------------------------------------------

  predicateExpressions(predicate: QueryPredicate | undefined, clause: 'where' | 'having'): { expression: Expr; target: string }[] {
    if (predicate === undefined) return [];
    const entries = typeof predicate === 'string' ? [predicate] : predicate;
    return entries.map((entry, index) => {
      const target = typeof predicate === 'string' ? clause : `${clause}[${index}]`;
      return { expression: typeof entry === 'string' ? parseExpression(entry, target) : filterExpression(entry, clause, index), target };
    });
  }

  /** The where clause at row level, checked (§6.2 A.3): no aggregate, no metric, no window. */
  predicate(predicate: QueryPredicate | undefined, clause: 'where'): string {
    const parts = this.predicateExpressions(predicate, clause).map(({ expression, target }) => {
      checkWhere(expression, target, this.names);
      return writeExpression(expression, this.writer, this.rowLevel(this.whereFields, target), target);
    });
    return parts.join(' AND ');
  }

  /**
   * Names at row level: fields, and the values of structured filters. Inside a model metric (`scope`), the
   * fields the package lists for it, private ones too.
   */
  rowLevel(collected: ResolvedField[], target: string, scope?: PackageMetric, columns = false): NameResolver {
    return {
      name: (parts) => {
        const value = filterValue(parts, this.writer);
        if (value !== undefined) return value;
        if (parts.length === 1 && (this.model.metric(parts[0] as string).length > 0 || (scope && this.model.namedMetric(scope, parts[0] as string)))) {
          throw queryInvalid('E_NESTED_AGGREGATION_DEFERRED', target, `${target}: the metric ${parts[0]} is an aggregate; it cannot be inside another aggregate`);
        }
        const field = (scope && this.model.metricField(scope, parts)) ?? (columns && !scope ? this.fieldOrColumn(parts, target) : this.field(parts, target));
        collected.push(field);
        return this.fieldSql(field);
      },
      ...(scope ? { literal: this.modelLiteral } : {}),
    };
  }

  // --- measures ----------------------------------------------------------------------------------------

  measureOutput(measure: SemanticQuery['measures'][number], index: number): Output {
    const target = `measures[${index}]`;
    if ('metric' in measure) {
      const metric = this.metric(measure.metric, target);
      if (!metric) throw queryInvalid('E_NAME_NOT_FOUND', target, `${target}: ${measure.metric} is no metric of the model`);
      const expression = metricExpression(this.model, metric);
      if (expression) return { ...this.expressionOutput(expression, target, metric), name: measure.alias ?? metric.name };
      const windowed = windowedMetric(metric);
      if (windowed) return { ...this.expressionOutput(windowed, target), name: measure.alias ?? metric.name };
      const aggregate = this.metricAggregate(metric, target);
      return { name: measure.alias ?? metric.name, sql: () => this.aggregateRef(aggregate) };
    }
    return { ...this.expressionOutput(parseExpression(measure.expression, target), target), name: measure.alias ?? `measure_${index + 1}` };
  }

  /**
   * A measure expression, or a model metric's (`scope`, decisions 21, 28): each aggregate at the query's grain
   * in its home's subquery, everything around them (arithmetic, a window) over the merged rows.
   */
  private expressionOutput(expression: Expr, target: string, scope?: PackageMetric): Output {
    checkNestedWindows(expression, target);
    this.checkRowWindows(expression, target);
    checkMeasure(expression, target, this.names);
    // Resolve now (adds its aggregates); the text is written again once the groups are known.
    writeExpression(expression, this.writer, this.finalResolver([], scope), target);
    return { name: target, sql: () => writeExpression(expression, this.writer, this.finalResolver([], scope), target), windowed: hasWindow(expression) };
  }

  /**
   * A bare window over row-level fields runs over its home dataset's rows (§6.10.3, §6.10.4). When a
   * dimension or filter of the query lies on the many side of that home, the home's rows repeat before the
   * window would see them, and the per-home plan has no rewrite for a window (its de-duplication is for
   * aggregates): `E_WINDOW_OVER_FANOUT_REWRITE`; without fan-out it is a finer-grain reference (checked after
   * this). A window inside an aggregate runs before any join (tableWindow), so no join repeats its rows.
   */
  checkRowWindows(expression: Expr, target: string): void {
    const visit = (node: Expr): void => {
      if (isAggregateCall(node)) return;
      if (node.kind === 'call' && node.window) {
        const fields = rowFieldsOf(node).filter((parts) => !this.dimensionOf(parts)).flatMap((parts) => this.model.fields(parts));
        if (fields.length > 0) this.checkWindowHome(fields, target);
      }
      for (const child of childrenOf(node)) visit(child);
    };
    visit(expression);
  }

  private checkWindowHome(fields: ResolvedField[], target: string): void {
    const homes = this.homes();
    const home = homeOf(fields.map((field) => field.dataset), target, homes);
    const fanned = homes.queryDatasets.find((dataset) => {
      const path = this.planner.path(home, dataset);
      return path.ok && path.steps.some((step) => step.fanOut);
    });
    if (fanned) {
      throw queryInvalid('E_WINDOW_OVER_FANOUT_REWRITE', target, `${target}: a window over rows of ${home.name} would see them repeated by the join to ${fanned.name}, which the query needs; the window has no safe rewrite`);
    }
  }

  /**
   * The dimension a field name means at the query's grain: the field grouped as it is, else the one time
   * grain of it the query groups by (`orders.ordered_at` by month is the month: a running total's order).
   */
  private dimensionOf(parts: string[]): Dimension | undefined {
    const found = this.model.fields(parts);
    if (found.length !== 1) return undefined;
    const ofField = this.dimensions.filter((dimension) => dimension.field.field === found[0]?.field);
    return ofField.find((dimension) => !dimension.grain) ?? (ofField.length === 1 ? ofField[0] : undefined);
  }

  /**
   * Names at the query's grain: result columns, dimensions, metrics; an aggregate call becomes an aggregate of
   * its home. Inside a model metric (`scope`), its names are the metric's own: the metrics and fields it reads.
   */
  finalResolver(outputs: Output[], scope?: PackageMetric): NameResolver {
    return {
      name: (parts) => {
        const value = filterValue(parts, this.writer);
        if (value !== undefined) return value;
        const target = parts.join('.');
        if (parts.length === 1) {
          const output = outputs.find((candidate) => candidate.name.toLowerCase() === (parts[0] as string).toLowerCase());
          if (output) return output.sql();
          const metric = (scope && this.model.namedMetric(scope, parts[0] as string)) ?? this.metric(parts[0] as string, target);
          if (!metric) throw queryInvalid('E_NAME_NOT_FOUND', target, `${target} is no metric of the model, nor a column of the query`);
          if (windowedMetric(metric)) {
            throw queryInvalid('E_WINDOWED_METRIC_COMPOSITION', target, `${target} holds a window function; ask for it as a measure of its own (composing windowed metrics is deferred, §6.10.5)`);
          }
          // Each operand at the query's grain, its aggregates at their own homes (§4.5 forms 2, 3).
          const expression = metricExpression(this.model, metric);
          if (expression) return writeExpression(expression, this.writer, this.finalResolver([], metric), target);
          return this.aggregateRef(this.metricAggregate(metric, target));
        }
        const dimension = this.dimensionOf(parts);
        if (dimension) return this.dimensionRef(dimension);
        if (!scope || !this.model.metricField(scope, parts)) this.field(parts, target);
        throw queryInvalid('E_UNAGGREGATED_FINER_GRAIN_REFERENCE', target, `${target} is a row-level field that is not a dimension of the query; aggregate it or group by it`);
      },
      aggregate: (call) => {
        // A call already resolved (a metric's expression is one tree, written for each place that names it).
        const resolved = this.resolvedCalls.get(call);
        if (resolved) return this.aggregateRef(resolved);
        const fields: ResolvedField[] = [];
        const rowLevel = { ...this.rowLevel(fields, call.name, scope, true), window: (window: WindowCall) => this.tableWindow(window, fields, call.name, scope) };
        const sql = writeAggregateCall(call, this.writer, rowLevel, call.name);
        // Keyed by its text with the values in place of their markers: writing the same call again finds it.
        const key = sql.replace(/\u0001(\d+)\u0002/g, (_marker, index: string) => JSON.stringify(this.writer.sources[Number(index)]));
        const aggregate = this.addAggregate(`expr:${key}`, sql, fields.flatMap((field) => field.datasets), fields.flatMap((field) => field.needs));
        aggregate.counts = call.name === 'count';
        const fact = scope && !aggregate.home ? this.model.factOf(scope) : undefined;
        if (fact) aggregate.fact = fact;
        this.resolvedCalls.set(call, aggregate);
        return this.aggregateRef(aggregate);
      },
      ...(scope ? { literal: this.modelLiteral } : {}),
    };
  }

  /**
   * A window inside an aggregate (§6.10.1 "the inner window runs at the inner aggregate's grain"): over the
   * rows of the one dataset whose fields it reads, computed in that dataset's derived table as a windowed
   * field is (decision 22), before the query's joins and filters; the aggregate then reads its column.
   */
  private tableWindow(window: WindowCall, collected: ResolvedField[], target: string, scope?: PackageMetric): string {
    const own: ResolvedField[] = [];
    const sql = writeExpression(window, this.writer, this.rowLevel(own, target, scope), target);
    const [first, ...others] = own;
    if (!first || others.some((field) => field.dataset !== first.dataset)) {
      throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a window inside an aggregate must read fields of one dataset, at whose grain it runs`);
    }
    if (own.some((field) => isWindowedField(field.field))) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a window cannot read a windowed field (a window inside another)`);
    const edges = [...new Set(own.flatMap((field) => field.enrichment))];
    this.readJoins(edges);
    collected.push({ ...first, datasets: [first.dataset], needs: [first.dataset] });
    return this.writer.column(first.dataset.alias, this.writer.window(first.dataset, sql, edges));
  }

  private metricAggregate(metric: PackageMetric, target: string): Aggregate {
    if (metric.joins.some((join) => join.fanOut)) {
      throw queryInvalid('E3012_MN_NO_SAFE_REWRITE', target, `the metric ${metric.name} joins from a one side to a many side; it has no safe plan`);
    }
    const datasets = metric.datasets.map((id) => this.model.dataset(id));
    const needs: JoinNeed[] = [...datasets];
    for (const id of metric.fields) {
      const dataset = this.model.dataset(id.split('.').slice(0, -1).join('.'));
      const field = dataset.fields.find((candidate) => candidate.id === id);
      if (!field) continue;
      const resolved = this.model.resolved(dataset, field);
      this.read(resolved);
      needs.push(...resolved.needs);
    }
    // A metric reading no field (COUNT(*)) has no home of its own: it takes the query's (formGroups).
    const home = datasets.length > 0 ? this.model.dataset(metric.baseDataset) : undefined;
    const aggregate = this.addAggregate(`metric:${metric.id}`, metric.sql, datasets, needs, home);
    aggregate.counts = countsRows(metric, this.model.pkg.metrics);
    const fact = home ? undefined : this.model.factOf(metric);
    if (fact) aggregate.fact = fact;
    return aggregate;
  }

  private addAggregate(key: string, sql: string, datasets: PackageDataset[], needs: JoinNeed[], home?: PackageDataset): Aggregate {
    const known = this.aggregates.get(key);
    if (known) return known;
    // An aggregate reading no field (COUNT(*)) takes its home once every other aggregate has one (formGroups).
    const unhomed = home === undefined && datasets.length === 0;
    const aggregate: Aggregate = { key, column: `m${this.aggregates.size}`, sql, ...(unhomed ? {} : { home: home ?? homeOf(datasets, key, this.homes()) }), needs };
    this.aggregates.set(key, aggregate);
    return aggregate;
  }

  /** The datasets the query's dimensions and filters read, for the homes of aggregates that read none. */
  private homes(): Homes {
    return { planner: this.planner, queryDatasets: [...new Set([...this.dimensions.flatMap((dimension) => dimension.field.datasets), ...this.whereFields.flatMap((field) => field.datasets)])] };
  }

  private aggregateRef(aggregate: Aggregate): string {
    return aggregateRef(this.writer, aggregate, this.grain);
  }

  formGroups(): void {
    this.groups = formGroups([...this.aggregates.values()], this.dimensions.length, this.homes());
  }

  datasource(): string {
    return datasourceOf(this.reads, this.groups);
  }
}

/** Why a name is refused when it is no field (nor, in an aggregate, a column the caller may read). */
function notFound(parts: readonly string[], target: string): string {
  return `${target}: ${parts.join('.')} is no field of the model (a field is written dataset.field)`;
}

/** The qualified names a window reads at row level: outside any aggregate within it. */
function rowFieldsOf(window: Expr): string[][] {
  const names: string[][] = [];
  const visit = (node: Expr): void => {
    if (isAggregateCall(node)) return;
    if (node.kind === 'name' && node.parts.length > 1 && !node.parts[0]?.startsWith('\u0000')) names.push(node.parts);
    for (const child of childrenOf(node)) visit(child);
  };
  visit(window);
  return names;
}

const metricExpressions = new WeakMap<PackageMetric, Expr | null>();

/**
 * A model metric's expression as the query language reads it, when every name in it is a field or metric
 * of the model: its aggregates are then computed each at its own home, and the rest over the merged rows
 * (§4.5: "each operand resolves independently at the query's grain"). Undefined for an expression in the
 * datasource's own syntax that the language does not read, or naming what is no field or metric of the
 * package (a column of a relation): that metric is computed from its package SQL in one subquery of its base
 * dataset. Cached per metric: a package's metrics and names do not change.
 */
function metricExpression(model: ModelIndex, metric: PackageMetric): Expr | undefined {
  let known = metricExpressions.get(metric);
  if (known === undefined) {
    known = null;
    try {
      const expression = parseExpression(metric.expression, `metric ${metric.name}`);
      const named = (parts: string[]) => (parts.length === 1
        ? model.namedMetric(metric, parts[0] as string) !== undefined || model.metric(parts[0] as string).length === 1
        : model.metricField(metric, parts) !== undefined || model.fields(parts).length === 1);
      if ([...nodesOf(expression)].every((node) => node.kind !== 'name' || named(node.parts))) known = expression;
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
    }
    metricExpressions.set(metric, known);
  }
  return known ?? undefined;
}

/**
 * Whether a metric is one COUNT (`COUNT(x)`, `COUNT(DISTINCT x)`, `COUNT(*)`), or a metric naming one (§4.5
 * form 3): 0 over no rows, not NULL.
 */
function countsRows(metric: PackageMetric, metrics: readonly PackageMetric[], depth = 0): boolean {
  let expression: Expr;
  try {
    expression = parseExpression(metric.expression, metric.name);
  } catch {
    return false; // the datasource's own syntax: no claim about its value over no rows
  }
  if (expression.kind === 'name' && expression.parts.length === 1 && depth < metrics.length) {
    const named = metrics.find((candidate) => metric.metrics.includes(candidate.id) && candidate.name.toLowerCase() === (expression.parts[0] as string).toLowerCase());
    return named !== undefined && countsRows(named, metrics, depth + 1);
  }
  return isAggregateCall(expression) && expression.kind === 'call' && expression.name === 'count';
}
