/**
 * Writing SQL text for one dialect: quoted names, relations, join conditions, and bound values. A value is
 * written as a marker first, since one fragment (the where clause) may appear in several places; `finish`
 * turns the markers into `?` in order of appearance and lists the values to bind in that order.
 */
import type { SemanticQuery } from '../plugin-api/semantic-query.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { PackageDataset } from '../plugin-api/semantic-package.js';
import type { Edge } from './model-index.js';
import { queryInvalid } from './query-errors.js';

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
export const MARKER_START = '\u0001';

export class SqlWriter {
  readonly sources: ParamSource[] = [];
  /** Every column the statement reads, per dataset: what the caller's grants must cover. */
  readonly reads = new Map<PackageDataset, Set<string>>();
  /**
   * Windows computed at a dataset's grain (windowed fields, windows inside aggregates), per dataset and by the
   * column that holds each, with the many-to-one joins of the enriched fields they read (decision 21): their
   * datasets are read through a derived table that computes them.
   */
  private readonly windows = new Map<PackageDataset, Map<string, { sql: string; edges: readonly Edge[] }>>();

  constructor(readonly dialect: WriterDialect) {}

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

/** The statement with `?` per value, and where each value comes from, in order. */
export function finish(text: string, sources: readonly ParamSource[]): { sql: string; order: ParamSource[] } {
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
