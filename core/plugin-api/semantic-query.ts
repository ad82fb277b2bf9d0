/**
 * A semantic query (docs/semantic-query.md): measures by dimensions of a VDB's semantic package, filtered
 * before aggregation (`where`) and after (`having`). The body of
 * `POST /api/v1/semantic/vdbs/{vdb}/versions/{version}/query`, once read.
 */
import type { TimeGrain } from './semantic-query-syntax.js';

/** A field to group by: `dataset.field`, optionally bucketed by a time grain, named `alias` in the result. */
export interface QueryDimension {
  field: string;
  grain?: TimeGrain;
  alias?: string;
}

/** A metric by name, or an aggregate expression over fields and metrics (then `alias` names its column). */
export type QueryMeasure = { metric: string; alias?: string } | { expression: string; alias?: string };

/** A row-level column of a scalar query: `dataset.field`, or an expression over fields, named `alias`. */
export type QueryField = { field: string; alias?: string } | { expression: string; alias?: string };

/** A structured filter: `field operator values`, the values bound, never spliced. */
export interface QueryFilter {
  field: string;
  operator: FilterOperator;
  values: unknown[];
}

/** The operators of a structured semantic query filter. */
export const FILTER_OPERATORS = [
  'equals', 'notEquals', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'between', 'contains', 'startsWith', 'endsWith', 'isNull', 'isNotNull',
] as const;
/** One of `FILTER_OPERATORS`. */
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** An OSI expression, or a list of them / of structured filters (their conjunction). */
export type QueryPredicate = string | (string | QueryFilter)[];

/** One ordering term of a semantic query. */
export interface QueryOrder {
  /** A dimension or measure of the query by its result name, a `dataset.field` or a metric name. */
  field: string;
  direction: 'asc' | 'desc';
  /** Default: last ascending, first descending (NULL sorts as the highest value). */
  nulls?: 'first' | 'last';
}

/** A semantic query: dimensions, measures, filters and order over a semantic package. */
export interface SemanticQuery {
  dimensions: QueryDimension[];
  measures: QueryMeasure[];
  /** A scalar query's columns (OSI Foundation §5.1.2): one row per row of the home dataset; never with dimensions or measures. */
  fields?: QueryField[];
  where?: QueryPredicate;
  having?: QueryPredicate;
  orderBy: QueryOrder[];
  limit?: number;
  offset?: number;
}
