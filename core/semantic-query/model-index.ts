/**
 * The names a semantic query may use, over one package: datasets, their fields (`dataset.field`, or
 * `namespace.dataset.field`), metrics by bare name, and the relationship graph. Regular identifiers match
 * without case (OSI expression language, "Namespacing"). Private fields and metrics (`access_modifier:
 * private`) are not there for callers: the model uses them, a query cannot name them.
 */
import type { CatalogColumn } from '../plugin-api/catalog.js';
import type { PackageDataset, PackageField, PackageMetric, PackageRelationship, SemanticPackage } from '../plugin-api/semantic-package.js';
import { isWindowedField } from './model-windows.js';

/** The columns of a dataset's relation, as the VDB's catalog has them; undefined where it has none. */
export type RelationColumns = (dataset: PackageDataset) => readonly CatalogColumn[] | undefined;

/** One direction of a relationship: from `from` to `to`; `fanOut` when it goes from the one side to the many side. */
export interface Edge {
  relationship: PackageRelationship;
  from: PackageDataset;
  to: PackageDataset;
  fanOut: boolean;
  /** Pairs of columns joined: [column of `from`, column of `to`]. */
  columns: [string, string][];
}

/**
 * What a query must join for a name: a dataset (along the path the planner finds from the home), or an edge
 * an enriched field fixed at activation (its many-to-one join from its own dataset, Foundation §4.3.1).
 */
export type JoinNeed = PackageDataset | Edge;

export interface ResolvedField {
  dataset: PackageDataset;
  field: PackageField;
  /** `dataset.field` as the query should write it. */
  name: string;
  /**
   * Its dataset, then those an enriched field joins many-to-one to read (the package field's `joins`); a
   * windowed field's dataset only (see `needs`).
   */
  datasets: PackageDataset[];
  /**
   * Its dataset, then an enriched field's joins as edges, parents first. A windowed field's joins are made
   * inside the derived table that computes it (`enrichment`), so its needs are its dataset only.
   */
  needs: JoinNeed[];
  /** An enriched field's many-to-one joins from its dataset, parents first. */
  enrichment: Edge[];
}

function isPrivate(element: PackageField | PackageMetric): boolean {
  return (element as { accessModifier?: string }).accessModifier === 'private';
}

export class ModelIndex {
  private readonly datasets = new Map<string, PackageDataset[]>();
  private readonly metrics = new Map<string, PackageMetric[]>();
  private readonly datasetById = new Map<string, PackageDataset>();
  readonly edges = new Map<PackageDataset, Edge[]>();
  /** Per metric, the fields it reads by the names its expression may write (`metricField`). */
  private readonly metricFields = new WeakMap<PackageMetric, Map<string, ResolvedField>>();
  private readonly columnTables = new Map<PackageDataset, readonly CatalogColumn[]>();

  constructor(readonly pkg: SemanticPackage, private readonly relationColumns: RelationColumns = () => undefined) {
    for (const dataset of pkg.datasets) {
      this.datasetById.set(dataset.id, dataset);
      for (const name of [dataset.name, `${dataset.namespace}.${dataset.name}`]) push(this.datasets, name.toLowerCase(), dataset);
      this.edges.set(dataset, []);
    }
    for (const metric of pkg.metrics) {
      if (isPrivate(metric)) continue;
      for (const name of [metric.name, `${metric.namespace}.${metric.name}`]) push(this.metrics, name.toLowerCase(), metric);
    }
    for (const relationship of pkg.relationships) {
      const from = this.datasetById.get(relationship.from);
      const to = this.datasetById.get(relationship.to);
      if (!from || !to) continue;
      const pairs = relationship.fromColumns.map((column, index): [string, string] => [column, relationship.toColumns[index] ?? column]);
      // Cardinality from the declared keys (Foundation §6.4): a side whose columns are no key is a many side.
      this.edges.get(from)?.push({ relationship, from, to, fanOut: !isKey(to, relationship.toColumns), columns: pairs });
      this.edges.get(to)?.push({ relationship, from: to, to: from, fanOut: !isKey(from, relationship.fromColumns), columns: pairs.map(([a, b]) => [b, a]) });
    }
  }

  dataset(id: string): PackageDataset {
    const dataset = this.datasetById.get(id);
    if (!dataset) throw new Error(`the package has no dataset ${id}`);
    return dataset;
  }

  /** The metric of that name; undefined when there is none, or several (the query must qualify it). */
  metric(name: string): PackageMetric[] {
    return this.metrics.get(name.toLowerCase()) ?? [];
  }

  /** `dataset.field` or `namespace.dataset.field`: every field that name can mean. */
  fields(parts: readonly string[]): ResolvedField[] {
    if (parts.length < 2) return [];
    const fieldName = (parts.at(-1) as string).toLowerCase();
    const datasets = this.datasets.get(parts.slice(0, -1).join('.').toLowerCase()) ?? [];
    return datasets.flatMap((dataset) => dataset.fields
      .filter((field) => field.name.toLowerCase() === fieldName && !isPrivate(field))
      .map((field) => this.resolved(dataset, field)));
  }

  /**
   * A field a metric's expression names (`dataset.field` or `namespace.dataset.field`), among the fields the
   * package lists for the metric: private ones too, which the model may use and a query may not name.
   */
  metricField(metric: PackageMetric, parts: readonly string[]): ResolvedField | undefined {
    let byName = this.metricFields.get(metric);
    if (!byName) {
      byName = new Map();
      for (const id of metric.fields) {
        const dataset = this.datasetById.get(id.split('.').slice(0, -1).join('.'));
        const field = dataset?.fields.find((candidate) => candidate.id === id);
        if (!dataset || !field) continue;
        const resolved = this.resolved(dataset, field);
        const name = `${dataset.name}.${field.name}`.toLowerCase();
        byName.set(name, resolved).set(`${dataset.namespace.toLowerCase()}.${name}`, resolved);
      }
      this.metricFields.set(metric, byName);
    }
    return byName.get(parts.join('.').toLowerCase());
  }

  /**
   * The fact of a metric's model entry: its one dataset that is the `to` of no relationship (what a bare
   * `COUNT(*)` counts in the models converters write), or the entry's only dataset; undefined otherwise.
   */
  factOf(metric: PackageMetric): PackageDataset | undefined {
    const datasets = this.pkg.datasets.filter((dataset) => dataset.model === metric.model && dataset.namespace === metric.namespace);
    const targets = new Set(this.pkg.relationships.map((relationship) => relationship.to));
    const facts = datasets.length === 1 ? datasets : datasets.filter((dataset) => !targets.has(dataset.id));
    return facts.length === 1 ? facts[0] : undefined;
  }

  /**
   * `dataset.column`: a column of the dataset's relation, for an aggregate of a query (as a model metric may
   * read one, docs/semantic-query.md decision 35). Names match as a model's do: exactly, else without case
   * when one column matches so. Its field's `sql` is the column's name: the query refers to the column, and
   * the writer writes it. Undefined when the name has no dataset, or its relation no such column.
   */
  column(parts: readonly string[]): ResolvedField | undefined {
    if (parts.length < 2) return undefined;
    const datasets = this.datasets.get(parts.slice(0, -1).join('.').toLowerCase()) ?? [];
    if (datasets.length !== 1) return undefined;
    const dataset = datasets[0] as PackageDataset;
    let columns = this.columnTables.get(dataset);
    if (!columns) this.columnTables.set(dataset, (columns = this.relationColumns(dataset) ?? []));
    const name = parts.at(-1) as string;
    const folded = columns.filter((candidate) => candidate.name.toLowerCase() === name.toLowerCase());
    const column = columns.find((candidate) => candidate.name === name) ?? (folded.length === 1 ? folded[0] : undefined);
    if (!column) return undefined;
    const field: PackageField = {
      id: `${dataset.id}.${column.name}`, name: column.name, expression: column.name, sql: column.name, column: column.name, columns: [column.name],
      logicalType: column.logicalType, nativeType: column.nativeType, nullable: column.nullable, isTime: false,
      label: null, description: null, aiContext: null, accessModifier: 'private',
    };
    return { dataset, field, name: `${dataset.name}.${column.name}`, datasets: [dataset], needs: [dataset], enrichment: [] };
  }

  /** A metric another metric's expression names by its bare name (a private one too). */
  namedMetric(metric: PackageMetric, name: string): PackageMetric | undefined {
    const wanted = name.toLowerCase();
    return this.pkg.metrics.find((candidate) => metric.metrics.includes(candidate.id) && candidate.name.toLowerCase() === wanted);
  }

  resolved(dataset: PackageDataset, field: PackageField): ResolvedField {
    const reached = [dataset];
    const edges = (field.joins ?? []).map((join) => {
      const edge = reached.flatMap((from) => this.edges.get(from) ?? []).find((candidate) => candidate.relationship.id === join.relationship && candidate.to.id === join.dataset);
      if (!edge) throw new Error(`field ${field.id} joins ${join.dataset} along ${join.relationship}, which the package does not relate`);
      reached.push(edge.to);
      return edge;
    });
    const windowed = isWindowedField(field);
    return { dataset, field, name: `${dataset.name}.${field.name}`, datasets: windowed ? [dataset] : reached, needs: windowed ? [dataset] : [dataset, ...edges], enrichment: edges };
  }
}

/** Whether the columns are the dataset's primary key or one of its unique keys (in any order). */
function isKey(dataset: PackageDataset, columns: readonly string[]): boolean {
  const same = (key: readonly string[]) => key.length === columns.length && key.every((column) => columns.includes(column));
  return (dataset.primaryKey.length > 0 && same(dataset.primaryKey)) || dataset.uniqueKeys.some(same);
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
