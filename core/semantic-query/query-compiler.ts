/**
 * Compiles a semantic query against one package to one SQL statement, following the OSI Foundation's
 * evaluation algorithm (§6.2 A; decisions in docs/semantic-query.md):
 * - each aggregate of a measure or of a model metric is computed at the query's dimensions from its home
 *   dataset (the one its fields are reached from along many-to-one relationships; `COUNT(*)` takes the other
 *   aggregates' home), LEFT-joined outward so orphan facts fall in the NULL group (§6.6); aggregates of one
 *   home share one grouped subquery, and arithmetic over aggregates is applied after (§4.5 form 2);
 * - where a dimension or filter lies on the many side of the home (a bridge, or a finer dataset), the home's
 *   rows are first de-duplicated per (primary key, group key), so a row counts once per group (§6.8.1);
 * - subqueries of different homes are stitched on the dimensions: the union of their keys, then a NULL-safe
 *   LEFT JOIN of each (a FULL OUTER JOIN that PGlite and MySQL cannot run), so no fact loses a group (§6.7);
 * - measure expressions, `having` and `orderBy` are evaluated over the stitched rows.
 */
import type { PackageDataset, PackageMetric } from '../plugin-api/semantic-package.js';
import type { QueryPredicate, SemanticQuery } from '../plugin-api/semantic-query.js';
import type { TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import { InputError } from '../plugin-api/errors.js';
import { childrenOf, nodesOf, type Expr } from './expression-ast.js';
import { parseExpression } from './expression-parser.js';
import { isAggregateCall, writeAggregateCall, writeExpression, type NameResolver } from './expression-writer.js';
import type { JoinPlanner } from './join-planner.js';
import type { Edge, JoinNeed, ModelIndex, ResolvedField } from './model-index.js';
import { modelLiteral } from './model-expressions.js';
import { isWindowedField, windowColumn, windowedMetric } from './model-windows.js';
import { queryInvalid } from './query-errors.js';
import { finish, SqlWriter, type ParamSource } from './sql-writer.js';
import { filterExpression, filterValue } from './structured-filters.js';
import { StatementAssembly, type Aggregate, type Dimension, type Group } from './statement-assembly.js';

export interface CompiledPlan {
  sql: string;
  params: ParamSource[];
  datasource: string;
  /** The result's columns, in order. */
  columns: string[];
  /** Every column the statement reads, per dataset: what the caller's grants must cover. */
  reads: Map<PackageDataset, Set<string>>;
  /**
   * The columns an aggregate of the query reads that no field names: one the caller may not read is refused
   * as a name that does not exist (`refusal`), so nothing tells it from one that does not.
   */
  columnReferences: ColumnReference[];
}

export interface ColumnReference {
  dataset: PackageDataset;
  column: string;
  refusal: { target: string; message: string };
}

interface Output {
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
/** The derived table of a having with a window. */
const RELAY = 'r';

export function compileQuery(model: ModelIndex, planner: JoinPlanner, dialect: SqlDialect, query: SemanticQuery): CompiledPlan {
  return new QueryCompiler(model, planner, new SqlWriter(dialect), query).compile();
}

class QueryCompiler {
  private readonly dimensions: Dimension[] = [];
  private readonly aggregates = new Map<string, Aggregate>();
  private readonly resolvedCalls = new Map<Expr, Aggregate>();
  private readonly whereFields: ResolvedField[] = [];
  private readonly columnReferences: ColumnReference[] = [];
  private groups: Group[] = [];
  private where = '';
  /** Set once a windowed having's derived table holds the dimensions and aggregates (relayColumns). */
  private relayed = false;

  constructor(
    private readonly model: ModelIndex,
    private readonly planner: JoinPlanner,
    private readonly writer: SqlWriter,
    private readonly query: SemanticQuery,
  ) {
    this.modelLiteral = modelLiteral(writer.dialect);
  }

  /** A model metric's literals are written into the text, as the package writes its expressions. */
  private readonly modelLiteral: NonNullable<NameResolver['literal']>;

  /** Every column the statement reads, per dataset (kept by the writer, which lists them in derived tables). */
  private get reads(): Map<PackageDataset, Set<string>> {
    return this.writer.reads;
  }

  compile(): CompiledPlan {
    if (this.query.fields) return this.compileScalar(this.query.fields);
    this.query.dimensions.forEach((dimension, index) => this.addDimension(dimension.field, dimension.grain, dimension.alias, index));
    this.where = this.predicate(this.query.where, 'where');
    const outputs: Output[] = [
      ...this.dimensions.map((dimension) => ({ name: dimension.output, sql: () => this.dimensionRef(dimension) })),
      ...this.query.measures.map((measure, index) => this.measureOutput(measure, index)),
    ];
    const taken = new Set<string>();
    for (const output of outputs) {
      if (taken.has(output.name.toLowerCase())) throw queryInvalid('E_NAME_COLLISION', output.name, `two columns of the result are named ${output.name}: give one an alias`);
      taken.add(output.name.toLowerCase());
    }
    const finalLevel = this.finalResolver(outputs);
    // Resolving having and orderBy may add aggregates, so the groups are formed after them, the text last.
    const havingExpressions = this.predicateExpressions(this.query.having, 'having');
    for (const { expression, target } of havingExpressions) {
      checkNestedWindows(expression, target);
      this.checkRowWindows(expression, target);
      this.checkHaving(expression, outputs, target);
    }
    const orderTerms = this.query.orderBy.map((order, index) => ({ order, target: `orderBy[${index}]`, output: outputs.find((output) => output.name.toLowerCase() === order.field.toLowerCase()) }));
    const orderExpressions = orderTerms.map(({ order, target, output }) => (output ? undefined : parseExpression(order.field, target)));
    orderExpressions.forEach((expression, index) => {
      if (!expression) return;
      checkNestedWindows(expression, orderTerms[index]?.target as string);
      this.checkRowWindows(expression, orderTerms[index]?.target as string);
    });
    // Text is written after every aggregate is known, since writing final-level text needs the group of each.
    const collect = (expression: Expr, target: string) => writeExpression(expression, this.writer, finalLevel, target);
    for (const { expression, target } of havingExpressions) collect(expression, target);
    orderExpressions.forEach((expression, index) => expression && collect(expression, orderTerms[index]?.target as string));
    this.formGroups();

    const having = havingExpressions.map(({ expression, target }) => writeExpression(expression, this.writer, finalLevel, target));
    // A window in having (§6.10.1 "Having: yes, over the post-GROUP BY row set"): the merged rows and the
    // having terms are computed in a derived table, filtered outside it, where the measures' own windows run
    // over the rows that remain (§6.3: windows run after having).
    const relay = havingExpressions.some(({ expression }) => nodesHaveWindow(expression)) ? this.relayColumns(having) : undefined;
    const order = orderTerms.map(({ order, target, output }, index) => {
      const sql = output ? output.sql() : writeExpression(orderExpressions[index] as Expr, this.writer, finalLevel, target);
      return this.writer.syntax.orderTerm(sql, order.direction, order.nulls ?? (order.direction === 'asc' ? 'last' : 'first'));
    });
    const select = outputs.map((output) => `${output.sql()} AS ${this.writer.name(output.name)}`).join(', ');
    const limit = this.query.limit === undefined ? undefined : this.writer.param({ kind: 'limit' });
    const offset = this.query.offset === undefined ? undefined : this.writer.param({ kind: 'offset' });
    const assembly = new StatementAssembly(this.writer, this.planner, this.reads, {
      dimensions: this.dimensions, groups: this.groups, where: this.where, whereNeeds: this.whereFields.flatMap((field) => field.needs),
    });
    const from = relay ? `(SELECT ${relay.columns.join(', ')} FROM ${assembly.stitch()}) ${this.writer.name(RELAY)}` : assembly.stitch();
    const filter = relay ? relay.filter : having;
    const text = [
      `WITH ${this.groups.map((group) => `${this.writer.name(group.alias)} AS (${assembly.groupSql(group)})`).join(', ')}${assembly.keysCte()}`,
      `SELECT ${select}`,
      `FROM ${from}`,
      filter.length > 0 ? `WHERE ${filter.join(' AND ')}` : '',
      order.length > 0 ? `ORDER BY ${order.join(', ')}` : '',
      this.writer.syntax.limitClause(limit, offset, order.length > 0),
    ].filter(Boolean).join(' ');
    const { sql, order: params } = finish(text, this.writer.sources);
    return { sql, params, datasource: this.datasource(), columns: outputs.map((output) => output.name), reads: this.reads, columnReferences: this.columnReferences };
  }

  /**
   * A scalar query (§5.1.2, §6.2 B): one row per row of the home dataset, the dataset every other one is
   * reached from many-to-one (or one-to-one); anything that would repeat its rows is `E_FAN_OUT_IN_SCALAR_QUERY`.
   */
  private compileScalar(fields: NonNullable<SemanticQuery['fields']>): CompiledPlan {
    this.where = this.predicate(this.query.where, 'where');
    const projected: ResolvedField[] = [];
    const taken = new Set<string>();
    const outputs = fields.map((entry, index) => {
      const target = `fields[${index}]`;
      const expression = 'field' in entry ? { kind: 'name' as const, parts: entry.field.split('.') } : parseExpression(entry.expression, target);
      checkNestedWindows(expression, target);
      for (const node of nodesOf(expression)) {
        const metric = node.kind === 'name' && node.parts.length === 1 && this.model.metric(node.parts[0] as string).length > 0;
        if (metric || (isAggregateCall(node))) throw queryInvalid('E_AGGREGATE_IN_SCALAR_QUERY', target, `${target} aggregates (or names a metric): a scalar query has no aggregation; ask with dimensions and measures`);
      }
      const sql = writeExpression(expression, this.writer, this.rowLevel(projected, target), target);
      // As for dimensions: the leaf name, with the dataset's in front when another column has it.
      const leaf = 'field' in entry ? (entry.field.split('.').at(-1) as string) : `field_${index + 1}`;
      const name = entry.alias ?? (taken.has(leaf.toLowerCase()) && 'field' in entry ? entry.field.split('.').slice(-2).join('_') : leaf);
      if (taken.has(name.toLowerCase())) throw queryInvalid('E_NAME_COLLISION', name, `two columns of the result are named ${name}: give one an alias`);
      taken.add(name.toLowerCase());
      return { name, sql };
    });
    const used = [...projected, ...this.whereFields];
    const order = this.query.orderBy.map((entry, index) => {
      const target = `orderBy[${index}]`;
      const output = outputs.find((candidate) => candidate.name.toLowerCase() === entry.field.toLowerCase());
      const sql = output ? output.sql : writeExpression(parseExpression(entry.field, target), this.writer, this.rowLevel(used, target), target);
      return this.writer.syntax.orderTerm(sql, entry.direction, entry.nulls ?? (entry.direction === 'asc' ? 'last' : 'first'));
    });
    // The home is the dataset of the fields (§5.1.2 "whose row-level fields drive the projection"); a filter or
    // order on a dataset it reaches only one-to-many would repeat its rows (checked with the joins below).
    const datasets = [...new Set((projected.length > 0 ? projected : used).flatMap((field) => field.datasets))];
    const home = datasets.find((candidate) => datasets.every((other) => {
      const path = this.planner.path(candidate, other);
      return path.ok && path.steps.every((step) => !step.fanOut);
    }));
    if (!home) {
      const [first, ...others] = datasets as [PackageDataset, ...PackageDataset[]];
      const apart = others.find((other) => !this.planner.connected(first, other));
      if (apart) throw queryInvalid('E_NO_PATH', 'fields', `no relationship path connects ${first.name} to ${apart.name}`);
      throw queryInvalid('E_FAN_OUT_IN_SCALAR_QUERY', 'fields', `no one of ${datasets.map((dataset) => dataset.name).join(', ')} reaches the others many-to-one: their rows would repeat; ask with dimensions and measures`);
    }
    this.groups = [{ alias: 'g0', home, aggregates: [] }];
    const assembly = new StatementAssembly(this.writer, this.planner, this.reads, { dimensions: [], groups: this.groups, where: this.where, whereNeeds: used.flatMap((field) => field.needs) });
    const limit = this.query.limit === undefined ? undefined : this.writer.param({ kind: 'limit' });
    const offset = this.query.offset === undefined ? undefined : this.writer.param({ kind: 'offset' });
    const text = [
      `SELECT ${outputs.map(({ name, sql }) => `${sql} AS ${this.writer.name(name)}`).join(', ')}`,
      `FROM ${assembly.fromClause(home, used.flatMap((field) => field.needs))}`,
      this.where === '' ? '' : `WHERE ${this.where}`,
      order.length > 0 ? `ORDER BY ${order.join(', ')}` : '',
      this.writer.syntax.limitClause(limit, offset, order.length > 0),
    ].filter(Boolean).join(' ');
    const { sql, order: params } = finish(text, this.writer.sources);
    return { sql, params, datasource: this.datasource(), columns: outputs.map(({ name }) => name), reads: this.reads, columnReferences: this.columnReferences };
  }

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

  private addReads(dataset: PackageDataset, read: Iterable<string>): void {
    let columns = this.reads.get(dataset);
    if (!columns) this.reads.set(dataset, (columns = new Set()));
    for (const column of read) columns.add(column);
  }

  private read(field: ResolvedField): void {
    this.addReads(field.dataset, field.field.columns);
    for (const other of field.field.reads ?? []) this.addReads(this.model.dataset(other.dataset), other.columns);
  }

  private readJoins(edges: readonly Edge[]): void {
    for (const edge of edges) {
      this.addReads(edge.from, edge.columns.map(([from]) => from));
      this.addReads(edge.to, edge.columns.map(([, to]) => to));
    }
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
    return field.field.column === null ? `(${field.field.sql})` : field.field.sql;
  }

  // --- dimensions --------------------------------------------------------------------------------------

  private addDimension(name: string, grain: TimeGrain | undefined, alias: string | undefined, index: number): void {
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
    for (const node of nodesOf(expression)) {
      const metric = node.kind === 'name' && node.parts.length === 1 && this.model.metric(node.parts[0] as string).length > 0;
      if (metric || isAggregateCall(node) || (node.kind === 'call' && node.window)) {
        throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: a dimension is row-level; it cannot aggregate, name a metric or hold a window`);
      }
    }
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

  private dimensionRef(dimension: Dimension): string {
    if (this.relayed) return this.writer.column(RELAY, dimension.column);
    return this.writer.column(this.groups.length > 1 && this.dimensions.length > 0 ? 'k' : 'g0', dimension.column);
  }

  /**
   * The columns of the derived table a windowed having filters: every dimension and aggregate at the query's
   * grain, and each having term; from then on, dimensions and aggregates are read from it.
   */
  private relayColumns(having: string[]): { columns: string[]; filter: string[] } {
    const columns = [
      ...this.dimensions.map((dimension) => `${this.dimensionRef(dimension)} AS ${this.writer.name(dimension.column)}`),
      ...[...this.aggregates.values()].map((aggregate) => `${this.aggregateRef(aggregate)} AS ${this.writer.name(aggregate.column)}`),
      // As a number: SQL Server and Oracle have no boolean column.
      ...having.map((term, index) => `CASE WHEN ${term} THEN 1 ELSE 0 END AS ${this.writer.name(`h${index}`)}`),
    ];
    this.relayed = true;
    return { columns, filter: having.map((_term, index) => `${this.writer.column(RELAY, `h${index}`)} = 1`) };
  }

  // --- where -------------------------------------------------------------------------------------------

  private predicateExpressions(predicate: QueryPredicate | undefined, clause: 'where' | 'having'): { expression: Expr; target: string }[] {
    if (predicate === undefined) return [];
    const entries = typeof predicate === 'string' ? [predicate] : predicate;
    return entries.map((entry, index) => {
      const target = typeof predicate === 'string' ? clause : `${clause}[${index}]`;
      return { expression: typeof entry === 'string' ? parseExpression(entry, target) : filterExpression(entry, clause, index), target };
    });
  }

  /** The where clause at row level, checked (§6.2 A.3): no aggregate, no metric, no window. */
  private predicate(predicate: QueryPredicate | undefined, clause: 'where'): string {
    const parts = this.predicateExpressions(predicate, clause).map(({ expression, target }) => {
      this.checkWhere(expression, target);
      return writeExpression(expression, this.writer, this.rowLevel(this.whereFields, target), target);
    });
    return parts.join(' AND ');
  }

  private checkWhere(expression: Expr, target: string): void {
    let aggregate = false;
    let row = false;
    let window = false;
    const visit = (node: Expr, inAggregate: boolean): void => {
      if (node.kind === 'call' && node.window) window = true;
      if (isAggregateCall(node)) aggregate = true;
      if (node.kind === 'name' && !node.parts[0]?.startsWith('\u0000')) {
        if (node.parts.length === 1 && this.model.metric(node.parts[0] as string).length > 0) aggregate = true;
        else if (!inAggregate) row = true;
      }
      for (const child of childrenOf(node)) visit(child, inAggregate || isAggregateCall(node));
    };
    visit(expression, false);
    if (window) throw queryInvalid('E_WINDOW_IN_WHERE', target, `${target}: a window function cannot filter rows before aggregation; use having, or a field that holds the window`);
    if (aggregate && row) throw queryInvalid('E_MIXED_PREDICATE_LEVEL', target, `${target} mixes row-level terms with aggregates: put the aggregate part in having`);
    if (aggregate) throw queryInvalid('E_AGGREGATE_IN_WHERE', target, `${target} aggregates (or names a metric): where filters rows before aggregation; use having`);
  }

  /**
   * Names at row level: fields, and the values of structured filters. Inside a model metric (`scope`), the
   * fields the package lists for it, private ones too.
   */
  private rowLevel(collected: ResolvedField[], target: string, scope?: PackageMetric, columns = false): NameResolver {
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

  private measureOutput(measure: SemanticQuery['measures'][number], index: number): Output {
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
    this.checkMeasure(expression, target);
    // Resolve now (adds its aggregates); the text is written again once the groups are known.
    writeExpression(expression, this.writer, this.finalResolver([], scope), target);
    return { name: target, sql: () => writeExpression(expression, this.writer, this.finalResolver([], scope), target), windowed: nodesHaveWindow(expression) };
  }

  private checkMeasure(expression: Expr, target: string): void {
    const visit = (node: Expr): void => {
      if (isAggregateCall(node)) return;
      if (node.kind === 'name' && node.parts.length > 1 && !this.dimensionOf(node.parts)) {
        throw queryInvalid('E_UNAGGREGATED_FINER_GRAIN_REFERENCE', target, `${target}: ${node.parts.join('.')} is a row-level field outside any aggregate; wrap it in one (SUM, COUNT, ...) or group by it`);
      }
      for (const child of childrenOf(node)) visit(child);
    };
    visit(expression);
  }

  /**
   * A bare window over row-level fields runs over its home dataset's rows (§6.10.3, §6.10.4). When a
   * dimension or filter of the query lies on the many side of that home, the home's rows repeat before the
   * window would see them, and the per-home plan has no rewrite for a window (its de-duplication is for
   * aggregates): `E_WINDOW_OVER_FANOUT_REWRITE`; without fan-out it is a finer-grain reference (checked after
   * this). A window inside an aggregate runs before any join (tableWindow), so no join repeats its rows.
   */
  private checkRowWindows(expression: Expr, target: string): void {
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
    const home = this.homeOf(fields.map((field) => field.dataset), target);
    const fanned = this.queryDatasets().find((dataset) => {
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
  private finalResolver(outputs: Output[], scope?: PackageMetric): NameResolver {
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
    const aggregate: Aggregate = { key, column: `m${this.aggregates.size}`, sql, ...(unhomed ? {} : { home: home ?? this.homeOf(datasets, key) }), needs };
    this.aggregates.set(key, aggregate);
    return aggregate;
  }

  /** The dataset every other one is reached from along many-to-one paths; without datasets, the query's finest. */
  private homeOf(datasets: PackageDataset[], target: string): PackageDataset {
    const candidates = datasets.length > 0 ? [...new Set(datasets)] : this.queryDatasets();
    const reachesAll = (home: PackageDataset) => candidates.every((other) => {
      const path = this.planner.path(home, other);
      return path.ok && path.steps.every((step) => !step.fanOut);
    });
    const home = candidates.find(reachesAll);
    if (home) return home;
    if (candidates.length === 0) throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field, and the query has no dataset to count`);
    const [first, ...others] = candidates as [PackageDataset, ...PackageDataset[]];
    const apart = others.find((other) => !this.planner.connected(first, other));
    if (apart) throw queryInvalid('E3013_NO_STITCHING_DIMENSION', target, `${target} reads ${first.name} and ${apart.name}, which no relationship path connects: one aggregate cannot read both`);
    throw queryInvalid('E3012_MN_NO_SAFE_REWRITE', target, `${target} reads ${candidates.map((dataset) => dataset.name).join(' and ')}, and no one of them reaches the others from the many side; aggregate each separately`);
  }

  /**
   * What `COUNT(*)` counts: the rows of the measure-bearing dataset (Foundation D-016), the home of the query's
   * other aggregates; without other aggregates, the query's finest dataset (dimensions and filters). Beside
   * aggregates of several homes it counts the finest dataset of the query when that is one of them; otherwise
   * nothing says which rows it counts. A model metric's COUNT(*) in a query with no dataset counts its model's fact.
   */
  private countedHome(homes: ReadonlySet<PackageDataset>, { key, fact }: Aggregate): PackageDataset {
    const target = key.replace(/^(expr|metric):/, '');
    if (homes.size === 1) return [...homes][0] as PackageDataset;
    if (this.queryDatasets().length === 0) {
      // A model metric's COUNT(*) asked alone counts the rows of its model's fact (Foundation D-016).
      if (fact && homes.size === 0) return fact;
      throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field, and the query has ${homes.size === 0 ? 'no dataset' : 'several datasets'} it could count: add a dimension or a filter of the dataset to count`);
    }
    const finest = this.homeOf([], target);
    if (homes.size === 0 || homes.has(finest)) return finest;
    throw queryInvalid('E_AMBIGUOUS_MEASURE_GRAIN', target, `${target} reads no field, and the query's other aggregates have several homes (${[...homes].map((home) => home.name).join(', ')}): count a field of the dataset meant, e.g. COUNT(${[...homes][0]?.name}.<key>)`);
  }

  private dimensionHome(): PackageDataset {
    try {
      return this.homeOf([], 'dimensions');
    } catch (error) {
      const [first] = this.queryDatasets();
      if (first) return first;
      throw error;
    }
  }

  private queryDatasets(): PackageDataset[] {
    return [...new Set([...this.dimensions.flatMap((dimension) => dimension.field.datasets), ...this.whereFields.flatMap((field) => field.datasets)])];
  }

  /**
   * An aggregate's column at the query's grain. In a stitch, a group that has no row of this aggregate's fact
   * gets what SQL gives over no rows (§6.11.5): NULL, but 0 for a COUNT.
   */
  private aggregateRef(aggregate: Aggregate): string {
    if (this.relayed) return this.writer.column(RELAY, aggregate.column);
    const column = this.writer.column(aggregate.group?.alias ?? '?', aggregate.column);
    return aggregate.counts && this.groups.length > 1 && this.dimensions.length > 0 ? `COALESCE(${column}, 0)` : column;
  }

  private checkHaving(expression: Expr, outputs: Output[], target: string): void {
    let aggregate = false;
    let row = false;
    const visit = (node: Expr): void => {
      if (isAggregateCall(node) || (node.kind === 'call' && node.window)) {
        aggregate = true;
        return;
      }
      if (node.kind === 'name' && !node.parts[0]?.startsWith('\u0000')) {
        if (node.parts.length === 1) {
          const output = outputs.find((candidate) => candidate.name.toLowerCase() === (node.parts[0] as string).toLowerCase());
          if (output?.windowed) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${output.name} holds a window function, computed after having; write the window in having itself`);
          if (!output || !this.dimensions.some((dimension) => dimension.output === output.name)) aggregate = true;
        } else if (!this.dimensionOf(node.parts)) row = true;
      }
      for (const child of childrenOf(node)) visit(child);
    };
    visit(expression);
    if (row && aggregate) throw queryInvalid('E_MIXED_PREDICATE_LEVEL', target, `${target} mixes row-level terms with aggregates: put the row-level part in where`);
    if (row) throw queryInvalid('E_NON_AGGREGATE_IN_HAVING', target, `${target} filters rows, not groups: put it in where`);
  }

  // --- groups and SQL ----------------------------------------------------------------------------------

  private formGroups(): void {
    const byHome = new Map<PackageDataset, Group>();
    const homes = new Set([...this.aggregates.values()].flatMap((aggregate) => aggregate.home ?? []));
    for (const aggregate of this.aggregates.values()) {
      const home = aggregate.home ?? this.countedHome(homes, aggregate);
      let group = byHome.get(home);
      if (!group) byHome.set(home, (group = { alias: `g${byHome.size}`, home, aggregates: [] }));
      group.aggregates.push(aggregate);
      aggregate.group = group;
    }
    this.groups = [...byHome.values()];
    // Without measures the query lists distinct dimension values: rows repeated by a fan-out change nothing.
    if (this.groups.length === 0) this.groups = [{ alias: 'g0', home: this.dimensionHome(), aggregates: [] }];
    if (this.groups.length > 1 && this.dimensions.length === 0) {
      const [first, ...others] = this.groups as [Group, ...Group[]];
      const apart = others.find((group) => !this.planner.connected(first.home, group.home));
      if (apart) {
        throw queryInvalid('E3013_NO_STITCHING_DIMENSION', 'measures', `${first.home.name} and ${apart.home.name} are not related and the query has no dimension: their totals would be a Cartesian product`);
      }
    }
  }

  private datasource(): string {
    const datasources = new Set([...this.reads.keys()].map((dataset) => dataset.relation.datasource));
    for (const group of this.groups) datasources.add(group.home.relation.datasource);
    if (datasources.size > 1) throw queryInvalid('E_INVALID_QUERY', 'measures', `the query reads datasets of ${datasources.size} datasources (${[...datasources].join(', ')}); federation is not available`);
    return [...datasources][0] as string;
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
 * A window inside a window (its argument, partition or order) has no grain of its own to run at: refused
 * before any SQL is written (Foundation D-028, `E_NESTED_WINDOW`).
 */
function checkNestedWindows(expression: Expr, target: string): void {
  const visit = (node: Expr, inWindow: boolean): void => {
    const window = node.kind === 'call' && node.window !== undefined;
    if (window && inWindow) throw queryInvalid('E_NESTED_WINDOW', target, `${target}: a window function inside another window function; compute the inner one in a field, or as a measure of its own`);
    for (const child of childrenOf(node)) visit(child, inWindow || window);
  };
  visit(expression, false);
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

function nodesHaveWindow(expression: Expr): boolean {
  return [...nodesOf(expression)].some((node) => node.kind === 'call' && node.window !== undefined);
}
