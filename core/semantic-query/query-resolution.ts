/**
 * The names of a semantic query resolved against the model: dimensions (fields, time grains, expressions),
 * measures (model metrics and expressions, each aggregate at its home and the query's grain), the where
 * clause, and what having and orderBy name; each clause checked as it is resolved (query-validation.ts).
 * What it finds goes into the plan's data (query-plan.ts): each expression resolved (`Resolved`: its names
 * references to fields, columns, dimensions, aggregates), the aggregates, the fields the filters read, the
 * columns read. It writes no SQL: the writer (sql-writer.ts) writes the plan.
 */
import type { PackageDataset, PackageMetric } from '../plugin-api/semantic-package.js';
import type { QueryPredicate, SemanticQuery } from '../plugin-api/semantic-query.js';
import type { TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import { InputError } from '../plugin-api/errors.js';
import { childrenOf, isAggregateCall, nodesOf, type Expr, type WindowSpec } from './expression-ast.js';
import { parseExpression } from './expression-parser.js';
import type { JoinPlanner } from './join-planner.js';
import type { Edge, JoinNeed, ModelIndex, ResolvedField } from './model-index.js';
import { isWindowedField, windowedMetric } from './model-windows.js';
import { queryInvalid } from './query-errors.js';
import {
  addReads, datasourcesOf, formGroups, homeOf,
  type Aggregate, type ColumnReference, type Dimension, type Group, type Homes, type JoinInputs, type Output, type Reads, type Reference, type Resolved, type ResolvedCall, type Term,
} from './query-plan.js';
import { checkAllowed, checkExpressionDimension, checkMeasure, checkNestedWindows, checkWhere, hasWindow, type QueryNames } from './query-validation.js';
import { filterExpression, filterValue } from './structured-filters.js';

/** A column of the result, resolved at the query's grain. */
export interface ResolvedOutput extends Output {
  /**
   * True when the column holds a window, computed after having (§6.2 A.10): a having naming it would filter
   * on other values than the result shows, so it is refused.
   */
  windowed?: boolean;
}

type Call = Extract<Expr, { kind: 'call' }>;

/** How a name, or an aggregate call met at the query's grain, resolves. */
interface NameResolver {
  name(parts: string[]): Resolved;
  /** An aggregate call (without window); absent where aggregates are not allowed. */
  aggregate?(call: Call): Resolved;
  /** A window call, where it is computed elsewhere (inside an aggregate); absent: in place. */
  window?(call: Call): Resolved;
  /** A model's own expression: its literals are written into the text, not bound. */
  inline?: boolean;
}

const ref = (reference: Reference): Resolved => ({ kind: 'ref', ref: reference });

const TIME_TYPES = new Set(['date', 'timestamp']);

export class QueryResolution {
  readonly dimensions: Dimension[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly resolvedCalls = new Map<Expr, Aggregate>();
  readonly whereFields: ResolvedField[] = [];
  readonly columnReferences: ColumnReference[] = [];
  groups: Group[] = [];
  /** The fields read as columns no field names (`fieldOrColumn`): referred to as columns. */
  private readonly columns = new WeakSet<ResolvedField>();

  constructor(
    private readonly model: ModelIndex,
    readonly planner: JoinPlanner,
    /** The dialect's scalar functions a query may call (its function policy). */
    private readonly functions: ReadonlySet<string>,
    /** Every column the statement reads, per dataset (the writer lists them in derived tables). */
    readonly reads: Reads = new Map(),
  ) {}

  /** What validation asks of the model and the query. */
  readonly names: QueryNames = {
    isMetric: (name) => this.model.metric(name).length > 0,
    isDimension: (parts) => this.dimensionOf(parts) !== undefined,
  };

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
    const column = this.model.column(parts);
    if (!column) return this.field(parts, target);
    this.columns.add(column);
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

  joinInputs(whereNeeds: JoinNeed[]): JoinInputs {
    return { planner: this.planner, reads: this.reads, groups: this.groups, dimensions: this.dimensions, whereNeeds };
  }

  /** A field's value at row level; a windowed field's is computed in its dataset's derived table, with its joins. */
  private fieldValue(field: ResolvedField): Resolved {
    this.read(field);
    if (isWindowedField(field.field)) this.readJoins(field.enrichment);
    return ref({ kind: 'field', field });
  }

  /**
   * An expression with its names resolved as `resolver` says, checked as it goes (the allow-list of calls,
   * aggregates where none may be). Children are resolved in the order the writer writes them, so aggregates
   * are numbered in the order they appear in the text.
   */
  resolve(expression: Expr, resolver: NameResolver, target: string): Resolved {
    const next = (child: Expr): Resolved => this.resolve(child, resolver, target);
    switch (expression.kind) {
      case 'name': return resolver.name(expression.parts);
      case 'literal': return resolver.inline && expression.value !== null ? { ...expression, inline: true } : expression;
      case 'keyword': case 'ref': return expression;
      case 'unary': return { ...expression, operand: next(expression.operand) };
      case 'binary': case 'distinctFrom': {
        const left = next(expression.left);
        return { ...expression, left, right: next(expression.right) };
      }
      case 'logical': return { ...expression, operands: expression.operands.map(next) };
      case 'in': {
        const operand = next(expression.operand);
        return { ...expression, operand, list: expression.list.map(next) };
      }
      case 'between': {
        const operand = next(expression.operand);
        const low = next(expression.low);
        return { ...expression, operand, low, high: next(expression.high) };
      }
      case 'like': {
        const operand = next(expression.operand);
        return { ...expression, operand, pattern: next(expression.pattern) };
      }
      case 'isNull': case 'cast': case 'datePart': case 'truncate': return { ...expression, operand: next(expression.operand) };
      case 'position': {
        const needle = next(expression.needle);
        return { ...expression, needle, haystack: next(expression.haystack) };
      }
      case 'portable': return { ...expression, args: expression.args.map(next) };
      case 'case': {
        // The writer writes the branches, then the otherwise, then the operand.
        const branches = expression.branches.map((branch) => {
          const when = next(branch.when);
          return { when, then: next(branch.then) };
        });
        const otherwise = expression.otherwise && next(expression.otherwise);
        return { ...expression, branches, otherwise, operand: expression.operand && next(expression.operand) };
      }
      case 'call': {
        if (expression.window && resolver.window) return resolver.window(expression);
        if (isAggregateCall(expression)) {
          if (!resolver.aggregate) throw queryInvalid('E_NESTED_AGGREGATION_DEFERRED', target, `${target}: ${expression.name.toUpperCase()} is an aggregate inside an aggregate; nested aggregation is deferred by the OSI Foundation`);
          return resolver.aggregate(expression);
        }
        checkAllowed(expression, this.functions, target);
        const args = expression.args.map(next);
        return { ...expression, args, window: expression.window && this.resolveWindow(expression.window, next) };
      }
    }
  }

  private resolveWindow(window: WindowSpec, next: (child: Expr) => Resolved): WindowSpec<Reference> {
    const partitionBy = window.partitionBy.map(next);
    return { ...window, partitionBy, orderBy: window.orderBy.map((term) => ({ ...term, expression: next(term.expression) })) };
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
    const base = this.fieldValue(field);
    const value: Resolved = grain ? { kind: 'truncate', grain, operand: base } : base;
    const plain = grain ? `${field.field.name}_${grain}` : field.field.name;
    const clash = this.dimensions.some((dimension) => dimension.output === plain);
    const output = alias ?? (clash ? `${field.dataset.name}_${plain}` : plain);
    this.dimensions.push({ output, column: `d${index}`, field, grain, value });
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
    const value = this.resolve(expression, this.rowLevel(fields, target), target);
    const [first] = fields;
    if (!first) throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field: a dimension groups by a field or an expression over fields`);
    // Its own field identity, so that naming one of its fields elsewhere in the query does not mean this dimension.
    const field: ResolvedField = {
      ...first, field: { ...first.field }, name: `dimension_${index + 1}`,
      datasets: [...new Set(fields.flatMap((read) => read.datasets))], needs: [...new Set(fields.flatMap((read) => read.needs))],
    };
    const output = alias ?? `dimension_${index + 1}`;
    this.dimensions.push({ output, column: `d${index}`, field, grain: undefined, value });
  }

  dimensionRef(dimension: Dimension): Resolved {
    return ref({ kind: 'dimension', dimension });
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
  predicate(predicate: QueryPredicate | undefined, clause: 'where'): Term[] {
    return this.predicateExpressions(predicate, clause).map(({ expression, target }) => {
      checkWhere(expression, target, this.names);
      return { value: this.resolve(expression, this.rowLevel(this.whereFields, target), target), target };
    });
  }

  /**
   * Names at row level: fields, and the values of structured filters. Inside a model metric (`scope`), the
   * fields the package lists for it, private ones too.
   */
  rowLevel(collected: ResolvedField[], target: string, scope?: PackageMetric, columns = false): NameResolver {
    return {
      name: (parts) => {
        const value = filterValue(parts);
        if (value !== undefined) return ref(value);
        if (parts.length === 1 && (this.model.metric(parts[0] as string).length > 0 || (scope && this.model.namedMetric(scope, parts[0] as string)))) {
          throw queryInvalid('E_NESTED_AGGREGATION_DEFERRED', target, `${target}: the metric ${parts[0]} is an aggregate; it cannot be inside another aggregate`);
        }
        const field = (scope && this.model.metricField(scope, parts)) ?? (columns && !scope ? this.fieldOrColumn(parts, target) : this.field(parts, target));
        collected.push(field);
        if (this.columns.has(field)) return ref({ kind: 'column', dataset: field.dataset, column: field.field.name });
        return this.fieldValue(field);
      },
      inline: scope !== undefined,
    };
  }

  // --- measures ----------------------------------------------------------------------------------------

  measureOutput(measure: SemanticQuery['measures'][number], index: number): ResolvedOutput {
    const target = `measures[${index}]`;
    if ('metric' in measure) {
      const metric = this.metric(measure.metric, target);
      if (!metric) throw queryInvalid('E_NAME_NOT_FOUND', target, `${target}: ${measure.metric} is no metric of the model`);
      const expression = metricExpression(this.model, metric);
      if (expression) return { ...this.expressionOutput(expression, target, metric), name: measure.alias ?? metric.name };
      const windowed = windowedMetric(metric);
      if (windowed) return { ...this.expressionOutput(windowed, target), name: measure.alias ?? metric.name };
      const aggregate = this.metricAggregate(metric, target);
      return { name: measure.alias ?? metric.name, value: this.aggregateRef(aggregate), target };
    }
    return { ...this.expressionOutput(parseExpression(measure.expression, target), target), name: measure.alias ?? `measure_${index + 1}` };
  }

  /**
   * A measure expression, or a model metric's (`scope`, decisions 21, 28): each aggregate at the query's grain
   * in its home's subquery, everything around them (arithmetic, a window) over the merged rows.
   */
  private expressionOutput(expression: Expr, target: string, scope?: PackageMetric): ResolvedOutput {
    checkNestedWindows(expression, target);
    this.checkRowWindows(expression, target);
    checkMeasure(expression, target, this.names);
    return { name: target, value: this.resolve(expression, this.finalResolver([], scope), target), target, windowed: hasWindow(expression) };
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
  finalResolver(outputs: readonly Output[], scope?: PackageMetric): NameResolver {
    return {
      name: (parts) => {
        const value = filterValue(parts);
        if (value !== undefined) return ref(value);
        const target = parts.join('.');
        if (parts.length === 1) {
          const output = outputs.find((candidate) => candidate.name.toLowerCase() === (parts[0] as string).toLowerCase());
          if (output) return output.value;
          const metric = (scope && this.model.namedMetric(scope, parts[0] as string)) ?? this.metric(parts[0] as string, target);
          if (!metric) throw queryInvalid('E_NAME_NOT_FOUND', target, `${target} is no metric of the model, nor a column of the query`);
          if (windowedMetric(metric)) {
            throw queryInvalid('E_WINDOWED_METRIC_COMPOSITION', target, `${target} holds a window function; ask for it as a measure of its own (composing windowed metrics is deferred, §6.10.5)`);
          }
          // Each operand at the query's grain, its aggregates at their own homes (§4.5 forms 2, 3).
          const expression = metricExpression(this.model, metric);
          if (expression) return this.resolve(expression, this.finalResolver([], metric), target);
          return this.aggregateRef(this.metricAggregate(metric, target));
        }
        const dimension = this.dimensionOf(parts);
        if (dimension) return this.dimensionRef(dimension);
        if (!scope || !this.model.metricField(scope, parts)) this.field(parts, target);
        throw queryInvalid('E_UNAGGREGATED_FINER_GRAIN_REFERENCE', target, `${target} is a row-level field that is not a dimension of the query; aggregate it or group by it`);
      },
      aggregate: (call) => {
        // A call already resolved (a metric's expression is one tree, resolved for each place that names it).
        const known = this.resolvedCalls.get(call);
        if (known) return this.aggregateRef(known);
        const fields: ResolvedField[] = [];
        // Its arguments at row level: an aggregate inside is nested aggregation; a window runs at its dataset's grain.
        const rowLevel = { ...this.rowLevel(fields, call.name, scope, true), window: (window: Call) => this.tableWindow(window, fields, call.name, scope) };
        const resolved: ResolvedCall = { ...call, args: call.args.map((arg) => this.resolve(arg, rowLevel, call.name)) };
        const aggregate = this.addAggregate(`expr:${aggregateKey(resolved)}`, labelOf(call), { kind: 'call', call: resolved }, fields.flatMap((field) => field.datasets), fields.flatMap((field) => field.needs));
        aggregate.counts = call.name === 'count';
        const fact = scope && !aggregate.home ? this.model.factOf(scope) : undefined;
        if (fact) aggregate.fact = fact;
        this.resolvedCalls.set(call, aggregate);
        return this.aggregateRef(aggregate);
      },
      inline: scope !== undefined,
    };
  }

  /**
   * A window inside an aggregate (§6.10.1 "the inner window runs at the inner aggregate's grain"): over the
   * rows of the one dataset whose fields it reads, computed in that dataset's derived table as a windowed
   * field is (decision 22), before the query's joins and filters; the aggregate then reads its column.
   */
  private tableWindow(window: Call, collected: ResolvedField[], target: string, scope?: PackageMetric): Resolved {
    const own: ResolvedField[] = [];
    const resolved = this.resolve(window, this.rowLevel(own, target, scope), target);
    const [first, ...others] = own;
    if (!first || others.some((field) => field.dataset !== first.dataset)) {
      throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a window inside an aggregate must read fields of one dataset, at whose grain it runs`);
    }
    if (own.some((field) => isWindowedField(field.field))) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a window cannot read a windowed field (a window inside another)`);
    const edges = [...new Set(own.flatMap((field) => field.enrichment))];
    this.readJoins(edges);
    collected.push({ ...first, datasets: [first.dataset], needs: [first.dataset] });
    return ref({ kind: 'window', dataset: first.dataset, window: resolved, edges });
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
    const aggregate = this.addAggregate(`metric:${metric.id}`, metric.id, { kind: 'metric', metric }, datasets, needs, home);
    aggregate.counts = countsRows(metric, this.model.pkg.metrics);
    const fact = home ? undefined : this.model.factOf(metric);
    if (fact) aggregate.fact = fact;
    return aggregate;
  }

  private addAggregate(key: string, label: string, value: Aggregate['value'], datasets: PackageDataset[], needs: JoinNeed[], home?: PackageDataset): Aggregate {
    const known = this.aggregates.get(key);
    if (known) return known;
    // An aggregate reading no field (COUNT(*)) takes its home once every other aggregate has one (formGroups).
    const unhomed = home === undefined && datasets.length === 0;
    const aggregate: Aggregate = { key, label, column: `m${this.aggregates.size}`, value, ...(unhomed ? {} : { home: home ?? homeOf(datasets, label, this.homes()) }), needs };
    this.aggregates.set(key, aggregate);
    return aggregate;
  }

  /** The datasets the query's dimensions and filters read, for the homes of aggregates that read none. */
  private homes(): Homes {
    return { planner: this.planner, queryDatasets: [...new Set([...this.dimensions.flatMap((dimension) => dimension.field.datasets), ...this.whereFields.flatMap((field) => field.datasets)])] };
  }

  private aggregateRef(aggregate: Aggregate): Resolved {
    return ref({ kind: 'aggregate', aggregate });
  }

  formGroups(): void {
    this.groups = formGroups([...this.aggregates.values()], this.dimensions.length, this.homes());
  }

  datasources(): string[] {
    return datasourcesOf(this.reads, this.groups);
  }
}

/**
 * What tells aggregate calls apart: the call with its references by the model's ids (a field, a column, a
 * filter's value), so the same call written twice is one aggregate.
 */
function aggregateKey(call: ResolvedCall): string {
  return JSON.stringify(call, (key, value: unknown) => {
    if (key !== 'ref') return value;
    const reference = value as Reference;
    switch (reference.kind) {
      case 'field': return `field:${reference.field.field.id}`;
      case 'column': return `column:${reference.dataset.id}.${reference.column}`;
      case 'window': return { window: reference.window, dataset: reference.dataset.id };
      case 'dimension': return `dimension:${reference.dimension.column}`;
      case 'aggregate': return `aggregate:${reference.aggregate.key}`;
      case 'filterValue': return reference;
    }
  });
}

/** An aggregate call as an error names it: its function and the names it reads. */
function labelOf(call: Call): string {
  const argument = (arg: Expr): string => (arg.kind === 'name' ? arg.parts.join('.') : arg.kind === 'literal' ? String(arg.value) : '…');
  return `${call.name.toUpperCase()}(${call.star ? '*' : `${call.distinct ? 'DISTINCT ' : ''}${call.args.map(argument).join(', ')}`})`;
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
