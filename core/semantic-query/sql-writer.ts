/**
 * The one writer of SQL text of the semantic query compiler, for one dialect: quoted names, relations, join
 * conditions and bound values; resolved expressions (query-plan.ts `Resolved`: each reference written as what
 * it means, at row level or at the query's grain) and a model's own expressions; and the statement of a plan:
 * one grouped subquery per home dataset (its joins outward, LEFT; de-duplicated per key and group key where a
 * join fans out), the union of their dimension keys, and the NULL-safe stitch of the subqueries on those keys
 * (docs/semantic-query.md, "How a query is computed").
 *
 * A value is written as a marker first, since one fragment (the where clause) may appear in several places;
 * `finish` turns the markers into `?` in order of appearance and lists the values to bind in that order.
 */
import type { SemanticQuery } from '../plugin-api/semantic-query.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { PackageDataset } from '../plugin-api/semantic-package.js';
import { isAggregateCall, type FrameBound, type WindowFrame, type WindowSpec } from './expression-ast.js';
import type { Edge } from './model-index.js';
import type { Aggregate, AggregationPlan, Dimension, Group, GroupJoins, QueryPlan, Reads, Reference, Resolved, ResolvedCall, ScalarPlan } from './query-plan.js';
import { queryInvalid } from './query-errors.js';
import { checkAllowed } from './query-validation.js';
import { isWindowedField, windowColumn } from './model-windows.js';

/** Where a bound value comes from: the compiled text itself, or the query (values kept out of the cache key). */
export type ParamSource =
  | { kind: 'constant'; value: unknown }
  | { kind: 'filter'; clause: 'where' | 'having'; entry: number; value: number; like?: LikeForm }
  | { kind: 'limit' }
  | { kind: 'offset' };

/** A `contains`/`startsWith`/`endsWith` value: bound as a LIKE pattern, escaped for the dialect. */
export interface LikeForm {
  before: boolean;
  after: boolean;
  character: string;
  special: string;
}

/** What writing needs of a dialect: its quoting, its functions, its forms of the semantic SQL. */
export type WriterDialect = Pick<SqlDialect, 'quoteIdentifier' | 'functionPolicy' | 'semanticSyntax'>;

const MARKER = /\u0001(\d+)\u0002/g;
/** How a bound value's marker starts: text holding it holds a bound value. */
const MARKER_START = '\u0001';

export class SqlWriter {
  readonly sources: ParamSource[] = [];
  /**
   * Windows computed at a dataset's grain (windowed fields, windows inside aggregates), per dataset and by the
   * column that holds each, with the many-to-one joins of the enriched fields they read (decision 21): their
   * datasets are read through a derived table that computes them.
   */
  private readonly windows = new Map<PackageDataset, Map<string, { sql: string; edges: readonly Edge[] }>>();

  /** How the rows at the query's grain are read, once the statement's groups are known. */
  grain: Grain = { dimensions: 0, groups: 1, relayed: false };

  /**
   * `reads`: the plan's columns read per dataset, which a derived table of a dataset lists. `inlineLiterals`:
   * a model's own expression, whose literals are written into the text (the model is configuration, not input).
   */
  constructor(readonly dialect: WriterDialect, readonly reads: Reads = new Map(), readonly inlineLiterals = false) {}

  get syntax() {
    return this.dialect.semanticSyntax;
  }

  name(identifier: string): string {
    return this.dialect.quoteIdentifier(identifier);
  }

  column(table: string, column: string): string {
    return `${this.name(table)}.${this.name(column)}`;
  }

  param(source: ParamSource): string {
    this.sources.push(source);
    return `\u0001${this.sources.length - 1}\u0002`;
  }

  /** `schema.relation alias` (no AS: Oracle takes none before a table alias). */
  private table(dataset: PackageDataset): string {
    return `${this.name(dataset.relation.schema)}.${this.name(dataset.relation.name)} ${this.name(dataset.alias)}`;
  }

  /**
   * A dataset's relation. With windowed fields in the query it is a derived table of its rows: the columns
   * read so far and each window's value, computed before any join or filter of the query (§6.10.3). A window
   * over enriched fields is computed over the rows joined many-to-one to the datasets they read, which keeps
   * each row one row (§6.10.4 "N : 1 enrichments"). Written after the statement's names are resolved, so
   * every column the query reads of it is known.
   */
  relation(dataset: PackageDataset): string {
    const windows = [...(this.windows.get(dataset) ?? new Map<string, { sql: string; edges: readonly Edge[] }>())];
    if (windows.length === 0) return this.table(dataset);
    const edges = [...new Set(windows.flatMap(([, window]) => window.edges))];
    const joins = edges.map((edge) => `LEFT JOIN ${this.table(edge.to)} ON ${this.on(edge)}`);
    const columns = [...(this.reads.get(dataset) ?? [])].map((column) => this.column(dataset.alias, column));
    const values = windows.map(([column, window]) => `${window.sql} AS ${this.name(column)}`);
    return `(SELECT ${[...columns, ...values].join(', ')} FROM ${[this.table(dataset), ...joins].join(' ')}) ${this.name(dataset.alias)}`;
  }

  /**
   * Computes `sql` (a window, its names written over the dataset's alias) in the dataset's derived table, in
   * `column` or a column of its own; answers the column's name. One derived table joins each other dataset
   * once, so two windows reaching one along two relationships are `E_AMBIGUOUS_PATH`.
   */
  window(dataset: PackageDataset, sql: string, edges: readonly Edge[], column?: string): string {
    let windows = this.windows.get(dataset);
    if (!windows) this.windows.set(dataset, (windows = new Map()));
    for (const [known, window] of windows) if (window.sql === sql) return known;
    const clash = [...windows.values()].flatMap((window) => window.edges).find((known) => edges.some((edge) => edge.to === known.to && edge !== known));
    if (clash) throw queryInvalid('E_AMBIGUOUS_PATH', dataset.name, `two windows over ${dataset.name} read ${clash.to.name} along two relationships; its derived table joins it once`);
    const name = column ?? `w__${windows.size}`;
    windows.set(name, { sql, edges });
    return name;
  }

  join(edge: Edge): string {
    return `LEFT JOIN ${this.relation(edge.to)} ON ${this.on(edge)}`;
  }

  private on(edge: Edge): string {
    return edge.columns.map(([from, to]) => `${this.column(edge.from.alias, from)} = ${this.column(edge.to.alias, to)}`).join(' AND ');
  }
}

/** The alias of the derived table of a group's per-row dimension values (`SemanticSqlSyntax.rowValues`). */
const ROW_VALUES = 'd__';
/** The derived table of a having with a window. */
const RELAY = 'r';

/** How the rows of an aggregation query are read at the query's grain: from the stitch, or from a relay. */
interface Grain {
  dimensions: number;
  groups: number;
  relayed: boolean;
}

/** A plan's statement, with `?` per value, and where each value comes from, in order. */
export function writeStatement(plan: QueryPlan, dialect: WriterDialect): { sql: string; params: ParamSource[] } {
  const writer = new SqlWriter(dialect, plan.reads);
  const text = plan.kind === 'aggregation' ? aggregationStatement(writer, plan) : scalarStatement(writer, plan);
  const { sql, order } = finish(text, writer.sources);
  return { sql, params: order };
}

/** The row-level text of an aggregation plan, written once each; the clauses at the query's grain are written over it. */
interface RowText {
  dimensions: Map<Dimension, string>;
  aggregates: Map<Aggregate, string>;
  /** The where clause ('' without one), written once for every group. */
  where: string;
}

/** A dimension's column at the query's grain. */
function dimensionRef(writer: SqlWriter, dimension: Dimension): string {
  const { grain } = writer;
  if (grain.relayed) return writer.column(RELAY, dimension.column);
  return writer.column(grain.groups > 1 && grain.dimensions > 0 ? 'k' : 'g0', dimension.column);
}

/**
 * An aggregate's column at the query's grain. In a stitch, a group that has no row of this aggregate's fact
 * gets what SQL gives over no rows (§6.11.5): NULL, but 0 for a COUNT.
 */
function aggregateRef(writer: SqlWriter, aggregate: Aggregate): string {
  const { grain } = writer;
  if (grain.relayed) return writer.column(RELAY, aggregate.column);
  const column = writer.column(aggregate.group?.alias ?? '?', aggregate.column);
  return aggregate.counts && grain.groups > 1 && grain.dimensions > 0 ? `COALESCE(${column}, 0)` : column;
}

/** `value AS name`: a column of a result. */
function selected(writer: SqlWriter, sql: string, name: string): string {
  return `${sql} AS ${writer.name(name)}`;
}

/** An order term; without NULL placement, NULLs high (ASC NULLS LAST, DESC NULLS FIRST: Foundation §5.1, D-029). */
function orderTerm(writer: SqlWriter, sql: string, direction: 'asc' | 'desc', nulls: 'first' | 'last' | undefined): string {
  return writer.syntax.orderTerm(sql, direction, nulls ?? (direction === 'asc' ? 'last' : 'first'));
}

/** One group's subquery: its aggregates by the dimensions, over its home and joins. */
function groupSql(w: SqlWriter, group: Group, plan: AggregationPlan, text: RowText): string {
  const { outer, inner, key } = group.joins as GroupJoins;
  const where = text.where === '' ? '' : ` WHERE ${text.where}`;
  const sqlOf = (dimension: Dimension) => text.dimensions.get(dimension) as string;
  const measures = group.aggregates.map((aggregate) => `${text.aggregates.get(aggregate) as string} AS ${w.name(aggregate.column)}`);
  if (!key) {
    const joins = [...outer, ...inner.filter((edge) => !outer.includes(edge))];
    // A dimension holding a bound value (an expression dimension) is grouped by its position where the
    // server can; elsewhere it is computed once per row in a derived table and grouped by that column.
    // Written twice, it would hold two parameters the server does not know to be equal.
    const bound = (dimension: Dimension) => sqlOf(dimension).includes(MARKER_START);
    const applied = w.syntax.groupsByPosition || !w.syntax.rowValues ? [] : plan.dimensions.filter(bound);
    const value = (dimension: Dimension) => (applied.includes(dimension) ? w.column(ROW_VALUES, dimension.column) : sqlOf(dimension));
    const dimensions = plan.dimensions.map((dimension) => `${value(dimension)} AS ${w.name(dimension.column)}`);
    const term = (dimension: Dimension, index: number) => (w.syntax.groupsByPosition && bound(dimension) ? String(index + 1) : value(dimension));
    const groupBy = plan.dimensions.length > 0 ? ` GROUP BY ${plan.dimensions.map(term).join(', ')}` : '';
    const rowValues = applied.length > 0 && w.syntax.rowValues
      ? [w.syntax.rowValues(applied.map((dimension) => `${sqlOf(dimension)} AS ${w.name(dimension.column)}`).join(', '), w.name(ROW_VALUES))]
      : [];
    return `SELECT ${[...dimensions, ...measures].join(', ')} FROM ${[w.relation(group.home), ...joins.map((edge) => w.join(edge)), ...rowValues].join(' ')}${where}${groupBy}`;
  }
  // Rows of the home repeat along the fan-out: keep one per (home row, group key), then aggregate (§6.8.1).
  const keyColumns = key.map((column, index) => `${w.column(group.home.alias, column)} AS ${w.name(`p${index}`)}`);
  const dimensions = plan.dimensions.map((dimension) => `${sqlOf(dimension)} AS ${w.name(dimension.column)}`);
  const distinct = `SELECT DISTINCT ${[...keyColumns, ...dimensions].join(', ')} FROM ${[w.relation(group.home), ...inner.map((edge) => w.join(edge))].join(' ')}${where}`;
  const on = key.map((column, index) => `${w.column(group.home.alias, column)} = ${w.column('k', `p${index}`)}`).join(' AND ');
  const groupKeys = plan.dimensions.map((dimension) => w.column('k', dimension.column));
  const from = `(${distinct}) ${w.name('k')} JOIN ${w.relation(group.home)} ON ${on} ${outer.map((edge) => w.join(edge)).join(' ')}`;
  return `SELECT ${[...groupKeys, ...measures].join(', ')} FROM ${from}${groupKeys.length > 0 ? ` GROUP BY ${groupKeys.join(', ')}` : ''}`;
}

function keysCte(w: SqlWriter, plan: AggregationPlan): string {
  if (plan.groups.length < 2 || plan.dimensions.length === 0) return '';
  const columns = plan.dimensions.map((dimension) => w.name(dimension.column)).join(', ');
  return `, ${w.name('k')} AS (${plan.groups.map((group) => `SELECT ${columns} FROM ${w.name(group.alias)}`).join(' UNION ')})`;
}

function stitch(w: SqlWriter, plan: AggregationPlan): string {
  if (plan.groups.length === 1) return w.name('g0');
  if (plan.dimensions.length === 0) return plan.groups.map((group) => w.name(group.alias)).join(' CROSS JOIN ');
  const joins = plan.groups.map((group) => {
    const on = plan.dimensions.map((dimension) => w.syntax.nullSafeEquals(w.column(group.alias, dimension.column), w.column('k', dimension.column))).join(' AND ');
    return `LEFT JOIN ${w.name(group.alias)} ON ${on}`;
  });
  return `${w.name('k')} ${joins.join(' ')}`;
}

/** The LIMIT/OFFSET clause, its values bound from the query. */
function paging(w: SqlWriter, plan: QueryPlan, ordered: boolean): string {
  const limit = plan.limit ? w.param({ kind: 'limit' }) : undefined;
  const offset = plan.offset ? w.param({ kind: 'offset' }) : undefined;
  return w.syntax.limitClause(limit, offset, ordered);
}

/** An aggregation query's statement: the groups' subqueries, their stitch, then the query's own clauses. */
function aggregationStatement(w: SqlWriter, plan: AggregationPlan): string {
  // Row-level text first, in the order its names were resolved: the windows it computes in a dataset's
  // derived table are listed in that order, and every one is known before a derived table is written.
  const dimensions = new Map(plan.dimensions.map((dimension) => [dimension, writeExpression(dimension.value, w, `dimensions[${dimension.column.slice(1)}]`)]));
  const where = plan.where.map((term) => writeExpression(term.value, w, term.target)).join(' AND ');
  const aggregates = new Map<Aggregate, string>();
  const all = plan.groups.flatMap((group) => group.aggregates).sort((a, b) => Number(a.column.slice(1)) - Number(b.column.slice(1)));
  for (const aggregate of all) {
    aggregates.set(aggregate, aggregate.value.kind === 'metric' ? aggregate.value.metric.sql : writeAggregateCall(aggregate.value.call, w, aggregate.value.call.name));
  }
  w.grain = { dimensions: plan.dimensions.length, groups: plan.groups.length, relayed: false };
  const having = plan.having.map((term) => writeExpression(term.value, w, term.target));
  // A window in having (§6.10.1): the merged rows and the having terms are computed in a derived table,
  // filtered outside it, where the measures' own windows run over the rows that remain (§6.3).
  const relay = plan.relay ? [
    ...plan.dimensions.map((dimension) => selected(w, dimensionRef(w, dimension), dimension.column)),
    ...all.map((aggregate) => selected(w, aggregateRef(w, aggregate), aggregate.column)),
    // As a number: SQL Server and Oracle have no boolean column.
    ...having.map((term, index) => selected(w, `CASE WHEN ${term} THEN 1 ELSE 0 END`, `h${index}`)),
  ] : undefined;
  const filter = relay ? having.map((_term, index) => `${w.column(RELAY, `h${index}`)} = 1`) : having;
  if (relay) w.grain = { ...w.grain, relayed: true };
  const order = plan.order.map((term) => orderTerm(w, writeExpression(term.value, w, term.target), term.direction, term.nulls));
  const select = plan.outputs.map((output) => selected(w, writeExpression(output.value, w, output.target), output.name));
  const text: RowText = { dimensions, aggregates, where };
  const rows = stitch(w, plan);
  const from = relay ? `(SELECT ${relay.join(', ')} FROM ${rows}) ${w.name(RELAY)}` : rows;
  return [
    `WITH ${plan.groups.map((group) => `${w.name(group.alias)} AS (${groupSql(w, group, plan, text)})`).join(', ')}${keysCte(w, plan)}`,
    `SELECT ${select.join(', ')}`,
    `FROM ${from}`,
    filter.length > 0 ? `WHERE ${filter.join(' AND ')}` : '',
    order.length > 0 ? `ORDER BY ${order.join(', ')}` : '',
    paging(w, plan, order.length > 0),
  ].filter(Boolean).join(' ');
}

/** A scalar query's statement: its home's rows, joined many-to-one, filtered, ordered. */
function scalarStatement(w: SqlWriter, plan: ScalarPlan): string {
  // As resolved: the where clause, the fields, the order (the windows of derived tables in that order).
  const where = plan.where.map((term) => writeExpression(term.value, w, term.target)).join(' AND ');
  const select = plan.outputs.map((output) => selected(w, writeExpression(output.value, w, output.target), output.name));
  const order = plan.order.map((term) => orderTerm(w, writeExpression(term.value, w, term.target), term.direction, term.nulls));
  return [
    `SELECT ${select.join(', ')}`,
    `FROM ${[w.relation(plan.home), ...plan.joins.map((edge) => w.join(edge))].join(' ')}`,
    where === '' ? '' : `WHERE ${where}`,
    order.length > 0 ? `ORDER BY ${order.join(', ')}` : '',
    paging(w, plan, order.length > 0),
  ].filter(Boolean).join(' ');
}

/** The statement with `?` per value, and where each value comes from, in order. */
function finish(text: string, sources: readonly ParamSource[]): { sql: string; order: ParamSource[] } {
  const order: ParamSource[] = [];
  const sql = text.replace(MARKER, (_marker, index: string) => {
    order.push(sources[Number(index)] as ParamSource);
    return '?';
  });
  return { sql, order };
}

/** The values to bind for one query, in the order of the statement's `?`. */
export function bindings(order: readonly ParamSource[], query: SemanticQuery): unknown[] {
  return order.map((source) => {
    switch (source.kind) {
      case 'constant': return source.value;
      case 'limit': return query.limit;
      case 'offset': return query.offset;
      case 'filter': {
        const entries = query[source.clause];
        const entry = Array.isArray(entries) ? entries[source.entry] : undefined;
        const value = typeof entry === 'object' ? entry.values[source.value] : undefined;
        return source.like ? likePattern(value, source.like) : value;
      }
    }
  });
}

/** A LIKE filter's value as its pattern: the dialect's wildcards and escape character escaped, then `%` around. */
function likePattern(value: unknown, like: LikeForm): unknown {
  if (value === null || value === undefined) return value;
  const escaped = [...String(value)].map((character) => (like.special.includes(character) ? like.character + character : character)).join('');
  return `${like.before ? '%' : ''}${escaped}${like.after ? '%' : ''}`;
}

// --- expressions ---------------------------------------------------------------------------------------

/** A reference of a resolved expression: at row level (fields, columns, values, windows) or at the query's grain. */
function writeReference(ref: Reference, writer: SqlWriter, target: string): string {
  switch (ref.kind) {
    case 'field': {
      const { field } = ref;
      if (!isWindowedField(field.field)) return field.field.column === null ? `(${field.field.sql})` : field.field.sql;
      // Computed at its dataset's grain in a derived table, before the query's joins and filters (§6.10.4);
      // an enriched field its window reads brings its many-to-one joins into that table.
      return writer.column(field.dataset.alias, writer.window(field.dataset, field.field.sql, field.enrichment, windowColumn(field.field)));
    }
    case 'column': return writer.column(ref.dataset.alias, ref.column);
    case 'filterValue': {
      const source = { kind: 'filter' as const, clause: ref.clause, entry: ref.entry, value: ref.value };
      return writer.param(ref.like ? { ...source, like: { ...ref.like, ...writer.syntax.likeEscape } } : source);
    }
    case 'window': return writer.column(ref.dataset.alias, writer.window(ref.dataset, writeExpression(ref.window, writer, target), ref.edges));
    case 'dimension': return dimensionRef(writer, ref.dimension);
    case 'aggregate': return aggregateRef(writer, ref.aggregate);
  }
}

/** A literal written into the text, in the dialect's form: a model's own (configuration, not a caller's input). */
function inlineLiteral(writer: SqlWriter, value: string | number | boolean, digits: string | undefined): string {
  const { syntax } = writer;
  return typeof value === 'string' ? syntax.stringLiteral(value) : typeof value === 'number' ? digits ?? String(value) : syntax.booleanLiteral(value);
}

/**
 * An expression: resolved (its references written as what they mean), or a model's own (its names written
 * quoted, as parsed; an aggregate call in place).
 */
export function writeExpression(expression: Resolved, writer: SqlWriter, target: string, inAggregate = false): string {
  const write = (child: Resolved): string => writeExpression(child, writer, target, inAggregate);
  const { syntax } = writer;
  const inline = (literal: Extract<Resolved, { kind: 'literal' }>) => literal.inline === true || writer.inlineLiterals;
  switch (expression.kind) {
    case 'ref': return writeReference(expression.ref, writer, target);
    case 'name': return expression.parts.map((part) => writer.name(part)).join('.');
    case 'literal': {
      if (expression.value === null) return 'NULL';
      if (inline(expression)) return inlineLiteral(writer, expression.value, expression.digits);
      const placeholder = writer.param({ kind: 'constant', value: expression.value });
      return typeof expression.value === 'number' ? syntax.numberParam(placeholder, expression.value, /[.eE]/.test(expression.digits ?? '')) : placeholder;
    }
    case 'keyword': return expression.word;
    case 'unary': return expression.operator === 'NOT' ? `(NOT ${write(expression.operand)})` : `(${expression.operator}${write(expression.operand)})`;
    case 'binary':
      return expression.operator === '||' ? syntax.concat(write(expression.left), write(expression.right)) : `(${write(expression.left)} ${expression.operator} ${write(expression.right)})`;
    case 'logical': return `(${expression.operands.map(write).join(` ${expression.operator} `)})`;
    case 'in': return `(${write(expression.operand)} ${expression.negated ? 'NOT IN' : 'IN'} (${expression.list.map(write).join(', ')}))`;
    case 'between': return `(${write(expression.operand)} ${expression.negated ? 'NOT BETWEEN' : 'BETWEEN'} ${write(expression.low)} AND ${write(expression.high)})`;
    case 'like': {
      const [value, pattern] = [write(expression.operand), write(expression.pattern)];
      // A structured filter's pattern: its value is bound escaped, so `%` and `_` in it match themselves.
      if (expression.literal) return `(${value} LIKE ${pattern} ESCAPE '${syntax.likeEscape.character}')`;
      return `(${expression.caseInsensitive ? syntax.ilike(value, pattern, expression.negated) : `${value} ${expression.negated ? 'NOT LIKE' : 'LIKE'} ${pattern}`})`;
    }
    case 'isNull': return `(${write(expression.operand)} ${expression.negated ? 'IS NOT NULL' : 'IS NULL'})`;
    case 'distinctFrom': {
      const equal = syntax.nullSafeEquals(write(expression.left), write(expression.right));
      return expression.negated ? `(${equal})` : `(NOT (${equal}))`;
    }
    case 'cast': return `CAST(${write(expression.operand)} AS ${syntax.castType(expression.type, expression.modifiers)})`;
    case 'datePart': return syntax.datePart(expression.part, write(expression.operand));
    case 'truncate': return syntax.truncateTime(write(expression.operand), expression.grain);
    case 'position': {
      const [needle, haystack] = [write(expression.needle), write(expression.haystack)];
      return expression.reversed ? syntax.position(`REVERSE(${needle})`, `REVERSE(${haystack})`) : syntax.position(needle, haystack);
    }
    case 'portable': {
      const args = expression.args.map(write);
      const call = expression.name === 'dateadd' || expression.name === 'datediff'
        ? { name: expression.name, unit: expression.unit ?? 'day', args: args as [string, string] }
        : { name: expression.name, args };
      const sql = syntax.portable(call);
      if (sql === undefined) throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: this datasource's server has no form of ${expression.name.toUpperCase()}`);
      return sql;
    }
    case 'case': {
      const branches = expression.branches.map((branch) => `WHEN ${write(branch.when)} THEN ${write(branch.then)}`).join(' ');
      const otherwise = expression.otherwise ? ` ELSE ${write(expression.otherwise)}` : '';
      return `(CASE${expression.operand ? ` ${write(expression.operand)}` : ''} ${branches}${otherwise} END)`;
    }
    case 'call': {
      if (isAggregateCall(expression)) {
        if (inAggregate) throw queryInvalid('E_NESTED_AGGREGATION_DEFERRED', target, `${target}: ${expression.name.toUpperCase()} is an aggregate inside an aggregate; nested aggregation is deferred by the OSI Foundation`);
        return writeAggregateCall(expression, writer, target);
      }
      checkAllowed(expression, writer.dialect.functionPolicy.allowed, target);
      // PostgreSQL's CONCAT takes "any": a bound string there needs its type.
      const argument = (arg: Resolved) => (expression.name === 'concat' && arg.kind === 'literal' && typeof arg.value === 'string' && !inline(arg)
        ? syntax.stringParam(writer.param({ kind: 'constant', value: arg.value }))
        : write(arg));
      const args = expression.star ? '*' : `${expression.distinct ? 'DISTINCT ' : ''}${expression.args.map(argument).join(', ')}`;
      return `${expression.name.toUpperCase()}(${args})${expression.window ? ` OVER (${windowOf(expression.window, writer, write)})` : ''}`;
    }
  }
}

/** An aggregate call itself, its arguments at row level (an aggregate inside is nested aggregation). */
function writeAggregateCall(call: ResolvedCall, writer: SqlWriter, target: string): string {
  const args = call.args.map((arg) => writeExpression(arg, writer, target, true));
  if (call.name === 'median' || call.name.startsWith('percentile_')) {
    // MEDIAN(x); PERCENTILE_CONT(p) WITHIN GROUP (ORDER BY x), read by the parser as (p, x).
    const median = call.name === 'median';
    if (call.distinct || args.length !== (median ? 1 : 2)) throw queryInvalid('E_INVALID_EXPRESSION', target, `${target}: ${call.name.toUpperCase()} takes ${median ? 'one argument' : 'a fraction and an ordering'}, without DISTINCT`);
    const [fraction, argument] = median ? ['0.5', args[0] as string] : (args as [string, string]);
    const sql = writer.syntax.percentile(call.name === 'percentile_disc' ? 'disc' : 'cont', fraction, argument);
    if (sql === undefined) throw queryInvalid('E_FUNCTION_NOT_ALLOWED', target, `${target}: this datasource's server has no aggregate ${call.name.toUpperCase()}`);
    return sql;
  }
  return `${call.name.toUpperCase()}(${call.star ? '*' : `${call.distinct ? 'DISTINCT ' : ''}${args.join(', ')}`})`;
}

function windowOf(window: WindowSpec<Reference>, writer: SqlWriter, write: (child: Resolved) => string): string {
  const partition = window.partitionBy.length > 0 ? `PARTITION BY ${window.partitionBy.map(write).join(', ')}` : '';
  // NULL placement defaults as in the outer ORDER BY (OSI Foundation §6.10.2): high end.
  const order = window.orderBy.length > 0
    ? `ORDER BY ${window.orderBy.map((term) => writer.syntax.orderTerm(write(term.expression), term.direction, term.nulls ?? (term.direction === 'asc' ? 'last' : 'first'))).join(', ')}`
    : '';
  return [partition, order, window.frame ? frameText(window.frame) : ''].filter(Boolean).join(' ');
}

/** The frame clause; an offset is a whole number the parser checked, written as digits. */
function frameText(frame: WindowFrame): string {
  const bound = (value: FrameBound) => ('offset' in value ? `${value.offset} ${value.kind}` : value.kind);
  return frame.end ? `${frame.mode} BETWEEN ${bound(frame.start)} AND ${bound(frame.end)}` : `${frame.mode} ${bound(frame.start)}`;
}
