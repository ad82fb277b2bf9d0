/**
 * A semantic package as far as a caller's grants reach: the datasets whose relation it may select, the
 * fields whose every column it may select, the metrics and relationships over those alone. What the MCP
 * tools describe and the `semantic-package` resource answer; nothing else of the package reaches a caller.
 */
import { allows, type CallerGrants } from '../authorization/grants.js';
import type { PackageDataset, PackageField, PackageMetric, SemanticPackage } from '../plugin-api/semantic-package.js';

function selects(grants: CallerGrants, dataset: PackageDataset, columns: readonly string[]): boolean {
  return allows(grants, 'select', { schema: dataset.relation.schema, relation: dataset.relation.name, columns: [...columns] }).allowed;
}

/** The package cut to the grants, in the package's own shape. */
export function visiblePackage(pkg: SemanticPackage, grants: CallerGrants): SemanticPackage {
  if (grants.access === 'complete') return pkg;
  const byId = new Map(pkg.datasets.map((dataset) => [dataset.id, dataset]));
  const fieldVisible = (dataset: PackageDataset, field: PackageField) => selects(grants, dataset, field.columns)
    && (field.reads ?? []).every((read) => {
      const other = byId.get(read.dataset);
      return other !== undefined && selects(grants, other, read.columns);
    });
  const datasets = pkg.datasets.filter((dataset) => selects(grants, dataset, []))
    .map((dataset) => ({
      ...dataset,
      // a key over a column the caller may not select would name it
      primaryKey: selects(grants, dataset, dataset.primaryKey) ? dataset.primaryKey : [],
      uniqueKeys: dataset.uniqueKeys.filter((key) => selects(grants, dataset, key)),
      fields: dataset.fields.filter((field) => fieldVisible(dataset, field)),
    }));
  const visible = new Map(datasets.map((dataset) => [dataset.id, dataset]));
  const fieldIds = new Set(datasets.flatMap((dataset) => dataset.fields.map((field) => field.id)));
  const keysVisible = (id: string, columns: readonly string[]) => {
    const dataset = visible.get(id);
    return dataset !== undefined && selects(grants, dataset, columns);
  };
  return {
    ...pkg,
    datasets,
    relationships: pkg.relationships.filter((relationship) => keysVisible(relationship.from, relationship.fromColumns) && keysVisible(relationship.to, relationship.toColumns)),
    metrics: pkg.metrics.filter((metric) => metric.fields.every((field) => fieldIds.has(field)) && metric.datasets.every((dataset) => visible.has(dataset))),
  };
}

/** A metric as `list_metrics` and `describe_vdb` name it (with the datasources it reads where several: its queries are federated). */
export function metricSummary(metric: PackageMetric): Record<string, unknown> {
  return { name: metric.name, id: metric.id, description: metric.description, datasets: metric.datasets, ...(metric.datasources && { datasources: metric.datasources }) };
}

/** The public datasets, fields and metrics of a (cut) package, with their descriptions. */
export function semanticSummary(pkg: SemanticPackage): Record<string, unknown> {
  return {
    module: pkg.module,
    datasets: pkg.datasets.map((dataset) => ({
      name: dataset.name,
      id: dataset.id,
      description: dataset.description,
      relation: { schema: dataset.relation.schema, name: dataset.relation.name },
      fields: dataset.fields.filter((field) => field.accessModifier === 'public').map((field) => ({
        name: field.name, id: field.id, logicalType: field.logicalType, isTime: field.isTime, description: field.description,
        ...(field.datasources && { datasources: field.datasources }),
      })),
    })),
    metrics: pkg.metrics.filter((metric) => metric.accessModifier === 'public').map(metricSummary),
  };
}
