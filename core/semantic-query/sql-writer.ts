/**
 * Writing SQL text for one dialect: quoted names, relations, join conditions, and bound values. A value is
 * written as a marker first, since one fragment (the where clause) may appear in several places; `finish`
 * turns the markers into `?` in order of appearance and lists the values to bind in that order.
 */
import type { SemanticQuery } from '../plugin-api/semantic-query.js';
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { PackageDataset } from '../plugin-api/semantic-package.js';
import type { Edge } from './model-index.js';

/** Where a bound value comes from: the compiled text itself, or the query (values kept out of the cache key). */
export type ParamSource =
  | { kind: 'constant'; value: unknown }
  | { kind: 'filter'; clause: 'where' | 'having'; entry: number; value: number }
  | { kind: 'limit' }
  | { kind: 'offset' };

const MARKER = /\u0001(\d+)\u0002/g;

export class SqlWriter {
  readonly sources: ParamSource[] = [];

  constructor(readonly dialect: SqlDialect) {}

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
  relation(dataset: PackageDataset): string {
    return `${this.name(dataset.relation.schema)}.${this.name(dataset.relation.name)} ${this.name(dataset.alias)}`;
  }

  join(edge: Edge): string {
    const on = edge.columns.map(([from, to]) => `${this.column(edge.from.alias, from)} = ${this.column(edge.to.alias, to)}`).join(' AND ');
    return `LEFT JOIN ${this.relation(edge.to)} ON ${on}`;
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
        return typeof entry === 'object' ? entry.values[source.value] : undefined;
      }
    }
  });
}
