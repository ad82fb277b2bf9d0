import { authorizedContext as catalogContext, type AuthorizedCatalogContext } from '../authorization/authorized-context.js';
import type { CallerGrants } from '../authorization/grants.js';
import { PerGrantSet } from '../caching/per-grant-set.js';
import type { PackageField, SemanticPackage } from '../plugin-api/semantic-package.js';
import type { SqlFamily } from '../plugin-api/sql-dialect.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { AuthorizedContext, AuthorizedSemantic } from '../plugin-api/task-documents.js';

/** Derived once per VDB, grant set and package: all three are fixed for the life of the process. */
const derived = new PerGrantSet<VirtualDatabase, CallerGrants, AuthorizedContext>();

export interface TaskContextSource {
  vdb: VirtualDatabase;
  /** The grammar of the VDB's datasource. */
  sqlFamily: SqlFamily;
  /** The active semantic package; undefined when the VDB has none. */
  semanticPackage: { document: SemanticPackage; digest: string } | undefined;
}

/**
 * The `authorizedContext` of a task (docs/tasks.md): the catalog the caller may
 * select, and the semantic package cut to what that catalog covers. No credential, no identity.
 */
export function taskContext({ vdb, sqlFamily, semanticPackage }: TaskContextSource, grants: CallerGrants): AuthorizedContext {
  return derived.get(vdb, grants, () => {
    const catalog = catalogContext(vdb, grants);
    return {
      vdb: catalog.vdb,
      catalogRevision: catalog.catalogRevision,
      sqlFamily,
      semanticRevision: semanticPackage?.digest ?? null,
      access: catalog.access,
      relations: catalog.relations,
      functions: catalog.functions,
      semantic: semanticPackage ? visibleSemantic(semanticPackage.document, semanticPackage.digest, catalog) : null,
    };
  });
}

/**
 * Datasets whose relation the caller sees, with the public fields whose columns it sees; relationships
 * between visible datasets over visible columns; public metrics whose every field (private ones too: the
 * metric inlines them) and dataset stays visible. A private field or metric is the model's own building
 * block, never something to query (the Foundation's `access_modifier`).
 */
function visibleSemantic(document: SemanticPackage, digest: string, catalog: AuthorizedCatalogContext): AuthorizedSemantic {
  const columnsOf = new Map(catalog.relations.map((relation) => [`${relation.schema}.${relation.name}`, new Set(relation.columns.map((column) => column.name))]));
  const relationColumns = new Map(document.datasets.map((dataset) => [dataset.id, columnsOf.get(`${dataset.relation.schema}.${dataset.relation.name}`)]));
  const seesIn = (dataset: string, columns: readonly string[]) => columns.every((column) => relationColumns.get(dataset)?.has(column) ?? false);
  const relationshipById = new Map(document.relationships.map((relationship) => [relationship.id, relationship]));
  // An enriched field also reads the other datasets' columns and joins them: the caller must see those too.
  const seesEnrichment = (field: PackageField) => (field.reads ?? []).every((read) => seesIn(read.dataset, read.columns))
    && (field.joins ?? []).every((join) => {
      const relationship = relationshipById.get(join.relationship);
      return relationship !== undefined && seesIn(relationship.from, relationship.fromColumns) && seesIn(relationship.to, relationship.toColumns);
    });
  const readable = document.datasets.flatMap((dataset) => {
    const columns = columnsOf.get(`${dataset.relation.schema}.${dataset.relation.name}`);
    if (!columns) return [];
    return [{ ...dataset, fields: dataset.fields.filter((field) => field.columns.every((column) => columns.has(column)) && seesEnrichment(field)) }];
  });
  // a key naming a hidden column would name the column: it is left out, as the catalog's own keys are
  const datasets = readable.map((dataset) => {
    const visible = columnsOf.get(`${dataset.relation.schema}.${dataset.relation.name}`) ?? new Set<string>();
    const shown = (key: readonly string[]) => key.every((column) => visible.has(column));
    return {
      ...dataset,
      primaryKey: shown(dataset.primaryKey) ? dataset.primaryKey : [],
      uniqueKeys: dataset.uniqueKeys.filter(shown),
      fields: dataset.fields.filter((field) => field.accessModifier !== 'private'),
    };
  });
  const datasetIds = new Set(datasets.map((dataset) => dataset.id));
  const fieldIds = new Set(readable.flatMap((dataset) => dataset.fields.map((field) => field.id)));
  const columnsOfDataset = new Map(datasets.map((dataset) => [dataset.id, columnsOf.get(`${dataset.relation.schema}.${dataset.relation.name}`) ?? new Set<string>()]));
  const sees = (dataset: string, columns: readonly string[]) => columns.every((column) => columnsOfDataset.get(dataset)?.has(column) ?? false);
  const relationships = document.relationships.filter((relationship) =>
    datasetIds.has(relationship.from) && datasetIds.has(relationship.to) && sees(relationship.from, relationship.fromColumns) && sees(relationship.to, relationship.toColumns));
  const relationshipIds = new Set(relationships.map((relationship) => relationship.id));
  const metrics = document.metrics.filter((metric) =>
    metric.accessModifier !== 'private'
    && metric.datasets.every((dataset) => datasetIds.has(dataset))
    && metric.fields.every((field) => fieldIds.has(field))
    && metric.joins.every((join) => relationshipIds.has(join.relationship)));
  return { packageDigest: digest, datasets, relationships, metrics };
}
