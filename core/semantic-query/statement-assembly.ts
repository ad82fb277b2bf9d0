/**
 * The SQL text of a compiled semantic query: one grouped subquery per home dataset (its joins outward, LEFT;
 * de-duplicated per primary key and group key where a join fans out), the union of their dimension keys, and
 * the NULL-safe stitch of the subqueries on those keys (docs/semantic-query.md, "How a query is computed").
 */
import type { PackageDataset } from '../plugin-api/semantic-package.js';
import type { TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import type { JoinPlanner } from './join-planner.js';
import type { Edge, JoinNeed, ResolvedField } from './model-index.js';
import { queryInvalid } from './query-errors.js';
import { MARKER_START, type SqlWriter } from './sql-writer.js';

/** The alias of the derived table of a group's per-row dimension values (`SemanticSqlSyntax.rowValues`). */
const ROW_VALUES = 'd__';

export interface Dimension {
  output: string;
  column: string;
  field: ResolvedField;
  grain: TimeGrain | undefined;
  sql: string;
}

export interface Aggregate {
  key: string;
  column: string;
  sql: string;
  /** Undefined for COUNT(*) without dimensions or filters until the groups are formed: the others' home. */
  home?: PackageDataset;
  /** A model metric's COUNT(*): the fact of its model, counted when the query has no other dataset. */
  fact?: PackageDataset;
  /** The datasets it reads and the joins of the enriched fields among them. */
  needs: JoinNeed[];
  group?: Group;
  /** A COUNT: 0, not NULL, where its fact has no row (§6.11.5). */
  counts?: boolean;
}

export interface Group {
  alias: string;
  home: PackageDataset;
  aggregates: Aggregate[];
}

/** What the statement is made of, once every name is resolved. */
export interface StatementParts {
  dimensions: Dimension[];
  groups: Group[];
  /** The where clause at row level ('' without one), written once for every group. */
  where: string;
  whereNeeds: JoinNeed[];
}

export class StatementAssembly {
  constructor(
    private readonly writer: SqlWriter,
    private readonly planner: JoinPlanner,
    /** Every column the statement reads, per dataset; the join and key columns are added here. */
    private readonly reads: Map<PackageDataset, Set<string>>,
    private readonly parts: StatementParts,
  ) {}

  /** The joins from a group's home to every dataset it needs, and whether one fans out (rows then repeat). */
  private joinsOf(group: Group, needs: Iterable<JoinNeed>, scalar = false): { edges: Edge[]; fansOut: boolean } {
    const edges: Edge[] = [];
    const joined = new Map<PackageDataset, Edge | null>([[group.home, null]]);
    let fansOut = false;
    for (const dataset of needs) {
      if ('relationship' in dataset) {
        this.enrich(dataset, joined, edges);
        continue;
      }
      const path = this.planner.path(group.home, dataset);
      if (!path.ok) {
        const stitched = path.code === 'E_NO_PATH' && this.parts.groups.length > 1 && this.parts.groups.some((other) => !this.planner.connected(other.home, group.home));
        // A scalar query has no aggregation to absorb an N:N traversal: its rows would repeat (§6.2 B.5).
        const code = stitched ? 'E3013_NO_STITCHING_DIMENSION' : scalar && path.code === 'E3012_MN_NO_SAFE_REWRITE' ? 'E_FAN_OUT_IN_SCALAR_QUERY' : path.code;
        throw queryInvalid(code, dataset.name, `${path.message} (needed by ${group.aggregates.map((aggregate) => aggregate.key.replace(/^(metric|expr):/, '')).join(', ') || 'the dimensions'})`);
      }
      for (const edge of path.steps) {
        const known = joined.get(edge.to);
        if (known === undefined) {
          this.join(edge, joined, edges);
          fansOut ||= edge.fanOut;
        } else if (known !== null && known !== edge) {
          throw queryInvalid('E_AMBIGUOUS_PATH', edge.to.name, `${edge.to.name} is reached from ${group.home.name} along two relationships (${known.relationship.name}, ${edge.relationship.name})`);
        }
      }
    }
    return { edges, fansOut };
  }

  /** Adds `edge` to the query's joins, and the columns it joins on to those read. */
  private join(edge: Edge, joined: Map<PackageDataset, Edge | null>, edges: Edge[]): void {
    joined.set(edge.to, edge);
    edges.push(edge);
    for (const [column] of edge.columns) this.readColumn(edge.from, column);
    for (const [, column] of edge.columns) this.readColumn(edge.to, column);
  }

  /**
   * An enriched field's join: its target must be the row that edge reaches from the field's row, so it is
   * joined by that edge. Already in the query otherwise (the home, or reached along another path), it may be
   * another row, or a row where the field's dataset has none and the field must be NULL: `E_AMBIGUOUS_PATH`.
   */
  private enrich(edge: Edge, joined: Map<PackageDataset, Edge | null>, edges: Edge[]): void {
    const known = joined.get(edge.to);
    if (known === undefined) {
      this.join(edge, joined, edges);
      return;
    }
    if (known === edge) return;
    throw queryInvalid('E_AMBIGUOUS_PATH', edge.to.name, `a field of ${edge.from.name} enriches from ${edge.to.name} along ${edge.relationship.name}, and the query has ${edge.to.name} already, ${known === null ? 'as the home of a measure' : `along ${known.relationship.name}`}: the field's value would be read from another row; group by ${edge.to.name}'s own field instead`);
  }

  private readColumn(dataset: PackageDataset, column: string): void {
    let columns = this.reads.get(dataset);
    if (!columns) this.reads.set(dataset, (columns = new Set()));
    columns.add(column);
  }

  /** `home LEFT JOIN …` to every dataset, along paths that never repeat the home's rows (a scalar query's FROM). */
  fromClause(home: PackageDataset, needs: JoinNeed[]): string {
    const group: Group = { alias: 'g0', home, aggregates: [] };
    const { edges, fansOut } = this.joinsOf(group, needs, true);
    if (fansOut) throw queryInvalid('E_FAN_OUT_IN_SCALAR_QUERY', home.name, `joining from ${home.name} would repeat its rows; ask with dimensions and measures`);
    return [this.writer.relation(home), ...edges.map((edge) => this.writer.join(edge))].join(' ');
  }

  groupSql(group: Group): string {
    const w = this.writer;
    const context = [...this.parts.dimensions.flatMap((dimension) => dimension.field.needs), ...this.parts.whereNeeds];
    const own = group.aggregates.flatMap((aggregate) => aggregate.needs);
    const outer = this.joinsOf(group, own);
    const inner = this.joinsOf(group, context);
    const where = this.parts.where === '' ? '' : ` WHERE ${this.parts.where}`;
    const measures = group.aggregates.map((aggregate) => `${aggregate.sql} AS ${w.name(aggregate.column)}`);
    if (!inner.fansOut || group.aggregates.length === 0) {
      const joins = [...outer.edges, ...inner.edges.filter((edge) => !outer.edges.includes(edge))];
      // A dimension holding a bound value (an expression dimension) is grouped by its position where the
      // server can; elsewhere it is computed once per row in a derived table and grouped by that column.
      // Written twice, it would hold two parameters the server does not know to be equal.
      const bound = (dimension: Dimension) => dimension.sql.includes(MARKER_START);
      const applied = w.syntax.groupsByPosition || !w.syntax.rowValues ? [] : this.parts.dimensions.filter(bound);
      const value = (dimension: Dimension) => (applied.includes(dimension) ? w.column(ROW_VALUES, dimension.column) : dimension.sql);
      const dimensions = this.parts.dimensions.map((dimension) => `${value(dimension)} AS ${w.name(dimension.column)}`);
      const term = (dimension: Dimension, index: number) => (w.syntax.groupsByPosition && bound(dimension) ? String(index + 1) : value(dimension));
      const groupBy = this.parts.dimensions.length > 0 ? ` GROUP BY ${this.parts.dimensions.map(term).join(', ')}` : '';
      const rowValues = applied.length > 0 && w.syntax.rowValues
        ? [w.syntax.rowValues(applied.map((dimension) => `${dimension.sql} AS ${w.name(dimension.column)}`).join(', '), w.name(ROW_VALUES))]
        : [];
      return `SELECT ${[...dimensions, ...measures].join(', ')} FROM ${[w.relation(group.home), ...joins.map((edge) => w.join(edge)), ...rowValues].join(' ')}${where}${groupBy}`;
    }
    // Rows of the home repeat along the fan-out: keep one per (home row, group key), then aggregate (§6.8.1).
    const key = group.home.primaryKey.length > 0 ? group.home.primaryKey : group.home.uniqueKeys[0] ?? [];
    if (key.length === 0) {
      const along = inner.edges.filter((edge) => edge.fanOut).map((edge) => edge.relationship.name).join(', ');
      throw queryInvalid('E3012_MN_NO_SAFE_REWRITE', group.home.name, `${group.home.name} has no key (no primary or unique key, and no relationship has it as its to side), so its rows cannot be counted once per group across the one-to-many join along ${along}`);
    }
    for (const column of key) this.readColumn(group.home, column);
    const keyColumns = key.map((column, index) => `${w.column(group.home.alias, column)} AS ${w.name(`p${index}`)}`);
    const dimensions = this.parts.dimensions.map((dimension) => `${dimension.sql} AS ${w.name(dimension.column)}`);
    const distinct = `SELECT DISTINCT ${[...keyColumns, ...dimensions].join(', ')} FROM ${[w.relation(group.home), ...inner.edges.map((edge) => w.join(edge))].join(' ')}${where}`;
    const on = key.map((column, index) => `${w.column(group.home.alias, column)} = ${w.column('k', `p${index}`)}`).join(' AND ');
    const groupKeys = this.parts.dimensions.map((dimension) => w.column('k', dimension.column));
    const from = `(${distinct}) ${w.name('k')} JOIN ${w.relation(group.home)} ON ${on} ${outer.edges.map((edge) => w.join(edge)).join(' ')}`;
    return `SELECT ${[...groupKeys, ...measures].join(', ')} FROM ${from}${groupKeys.length > 0 ? ` GROUP BY ${groupKeys.join(', ')}` : ''}`;
  }

  keysCte(): string {
    if (this.parts.groups.length < 2 || this.parts.dimensions.length === 0) return '';
    const columns = this.parts.dimensions.map((dimension) => this.writer.name(dimension.column)).join(', ');
    return `, ${this.writer.name('k')} AS (${this.parts.groups.map((group) => `SELECT ${columns} FROM ${this.writer.name(group.alias)}`).join(' UNION ')})`;
  }

  stitch(): string {
    const w = this.writer;
    if (this.parts.groups.length === 1) return w.name('g0');
    if (this.parts.dimensions.length === 0) return this.parts.groups.map((group) => w.name(group.alias)).join(' CROSS JOIN ');
    const joins = this.parts.groups.map((group) => {
      const on = this.parts.dimensions.map((dimension) => w.syntax.nullSafeEquals(w.column(group.alias, dimension.column), w.column('k', dimension.column))).join(' AND ');
      return `LEFT JOIN ${w.name(group.alias)} ON ${on}`;
    });
    return `${w.name('k')} ${joins.join(' ')}`;
  }
}
