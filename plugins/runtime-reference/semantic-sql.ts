/**
 * Compiles a choice of metrics and dimensions of the authorized semantic package into one SELECT. Every
 * `sql` of the package names datasets by their alias, so the query only adds `FROM`/`JOIN ... AS <alias>`
 * around them. Identifiers are quoted PostgreSQL-style, as the package's own `sql` texts of the demo are.
 */
import type { AuthorizedSemantic, PackageDataset, PackageField, PackageMetric, PackageRelationship } from '../../core/plugin-api/index.js';

/** A field used to group by, with the dataset it belongs to. */
export interface Dimension {
  dataset: PackageDataset;
  field: PackageField;
}

/** What to compute: metrics (all on the same base dataset) grouped by dimensions; either list may be empty, not both. */
export interface SemanticSelection {
  metrics: PackageMetric[];
  dimensions: Dimension[];
}

export type CompiledQuery =
  | { ok: true; sql: string }
  /** No many-to-one path leads from the query's datasets to the dataset of `dimension`. */
  | { ok: false; unreachable: Dimension; from: PackageDataset };

export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The relationship path to every dataset reachable from `start` by following relationships from their
 * many side to their one side (breadth first, so each path is a shortest one). Only that direction is
 * followed: a join towards the one side never repeats rows, so aggregates stay right.
 */
export function manyToOnePaths(semantic: AuthorizedSemantic, start: readonly string[]): Map<string, PackageRelationship[]> {
  const known = new Set(semantic.datasets.map((dataset) => dataset.id));
  const paths = new Map<string, PackageRelationship[]>(start.map((id) => [id, []]));
  const queue = [...start];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    const path = paths.get(id) ?? [];
    for (const relationship of semantic.relationships) {
      if (relationship.from !== id || paths.has(relationship.to) || !known.has(relationship.to)) continue;
      paths.set(relationship.to, [...path, relationship]);
      queue.push(relationship.to);
    }
  }
  return paths;
}

/** The dataset a query starts from: the metrics' base dataset, else the first dimension's dataset. */
export function baseDatasetOf(semantic: AuthorizedSemantic, selection: SemanticSelection): PackageDataset | undefined {
  const baseId = selection.metrics[0]?.baseDataset ?? selection.dimensions[0]?.dataset.id;
  return semantic.datasets.find((dataset) => dataset.id === baseId);
}

/** The datasets a query has before any dimension is joined: the base and every dataset the metrics join. */
export function metricDatasetIds(base: PackageDataset, metrics: readonly PackageMetric[]): string[] {
  return [...new Set([base.id, ...metrics.flatMap((metric) => metric.joins.map((join) => join.dataset))])];
}

function relationOf(dataset: PackageDataset): string {
  return `${quoteIdentifier(dataset.relation.schema)}.${quoteIdentifier(dataset.relation.name)} AS ${quoteIdentifier(dataset.alias)}`;
}

function onClause(relationship: PackageRelationship, from: PackageDataset, to: PackageDataset): string {
  return relationship.fromColumns
    .map((column, index) => `${quoteIdentifier(from.alias)}.${quoteIdentifier(column)} = ${quoteIdentifier(to.alias)}.${quoteIdentifier(relationship.toColumns[index] ?? column)}`)
    .join(' AND ');
}

/** Output columns are named after the fields and metrics; a name seen before gets its dataset's name (or `metric_`) in front. */
function outputColumns(selection: SemanticSelection): { sql: string; name: string }[] {
  const taken = new Set<string>();
  const claim = (sql: string, name: string, qualified: string) => {
    const chosen = taken.has(name) ? qualified : name;
    taken.add(chosen);
    return { sql, name: chosen };
  };
  return [
    ...selection.dimensions.map(({ dataset, field }) => claim(field.sql, field.name, `${dataset.name}_${field.name}`)),
    ...selection.metrics.map((metric) => claim(metric.sql, metric.name, `metric_${metric.name}`)),
  ];
}

/**
 * `SELECT <dimensions>, <metrics> FROM <base> [JOIN ...] GROUP BY <dimensions> ORDER BY <first metric> DESC`.
 * Metric joins are the package's own; dimension datasets are joined along many-to-one paths with LEFT JOIN,
 * so that rows whose dimension is missing still count (under a null group) instead of vanishing.
 * Without metrics the query lists the distinct values of the dimensions, in order.
 */
export function compileSemanticQuery(semantic: AuthorizedSemantic, selection: SemanticSelection): CompiledQuery {
  const datasets = new Map(semantic.datasets.map((dataset) => [dataset.id, dataset]));
  const datasetOf = (id: string) => {
    const dataset = datasets.get(id);
    if (!dataset) throw new TypeError(`the semantic selection names dataset ${id}, which the package does not have`);
    return dataset;
  };
  const base = baseDatasetOf(semantic, selection);
  if (!base) throw new TypeError('a semantic selection needs a metric or a dimension of a known dataset');

  const joins: string[] = [];
  const joined = new Set([base.id]);
  for (const join of selection.metrics.flatMap((metric) => metric.joins)) {
    if (joined.has(join.dataset)) continue;
    joined.add(join.dataset);
    joins.push(`JOIN ${relationOf(datasetOf(join.dataset))} ON ${join.on}`);
  }
  const paths = manyToOnePaths(semantic, metricDatasetIds(base, selection.metrics));
  for (const dimension of selection.dimensions) {
    const path = paths.get(dimension.dataset.id);
    if (!path) return { ok: false, unreachable: dimension, from: base };
    for (const relationship of path) {
      if (joined.has(relationship.to)) continue;
      joined.add(relationship.to);
      const to = datasetOf(relationship.to);
      joins.push(`LEFT JOIN ${relationOf(to)} ON ${onClause(relationship, datasetOf(relationship.from), to)}`);
    }
  }

  const columns = outputColumns(selection);
  const lines = [`SELECT ${columns.map(({ sql, name }) => `${sql} AS ${quoteIdentifier(name)}`).join(', ')}`, `FROM ${relationOf(base)}`, ...joins];
  const groups = selection.dimensions.map(({ field }) => field.sql);
  if (groups.length > 0) {
    const firstMetric = columns[selection.dimensions.length];
    lines.push(`GROUP BY ${groups.join(', ')}`);
    lines.push(firstMetric ? `ORDER BY ${quoteIdentifier(firstMetric.name)} DESC` : `ORDER BY ${groups.join(', ')}`);
  }
  return { ok: true, sql: lines.join('\n') };
}
