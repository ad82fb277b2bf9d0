/**
 * Writes the compiled model as the semantic package: content only (no paths on disk, no time, no
 * generation), arrays in a fixed order, canonical JSON. The same model over the same catalog gives the
 * same bytes, and so the same digest, on every start and whatever the key order of its sources.
 */
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { canonicalJson, sha256Hex } from './digests.js';
import { ossieDocument } from './ossie-export.js';
import type { JoinStep } from './join-paths.js';
import type { CompiledMetric } from './model-compilation.js';
import type { AcquiredModule } from './module-acquisition.js';
import type { OsiDatatype } from './module-schemas.js';
import type { DatasetElement, FieldElement, RelationshipElement, SemanticModel } from './model-elements.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';
import type {
  PackageDataset, PackageField, PackageJoin, PackageMetric, PackageRelationship, SemanticPackage,
} from '../plugin-api/semantic-package.js';
import type { CompiledPackage } from './semantic-types.js';

interface PackageInput {
  vdb: VirtualDatabase;
  module: AcquiredModule;
  model: SemanticModel;
  metrics: CompiledMetric[];
  dialectOf(datasource: string): ExpressionDialect;
}

/** A field whose `dimension.is_time` is unset is a time dimension when its datatype is temporal (osi-schema.json `Dimension`). */
const TEMPORAL_DATATYPES: ReadonlySet<OsiDatatype> = new Set(['Date', 'Time', 'DateTime', 'DateTimeTz']);

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function buildPackage(input: PackageInput): CompiledPackage {
  const { vdb, module, model } = input;
  const document: SemanticPackage = {
    format: 'semantic-package',
    formatVersion: 1,
    vdb: { name: vdb.name, version: vdb.version, catalogRevision: vdb.catalogRevision },
    module: { name: module.manifest.name, version: module.manifest.version, namespace: module.manifest.namespace },
    sources: module.documents.map((document) => ({ path: document.path, mediaType: document.mediaType, contentDigest: document.contentDigest })),
    models: model.scopes.flatMap((scope) => scope.document.value.semantic_model.map((osi) => ({
      name: osi.name,
      namespace: scope.namespace,
      document: scope.document.path,
      description: osi.description ?? null,
      aiContext: osi.ai_context ?? null,
    }))),
    datasets: model.datasets.map((dataset) => packageDataset(dataset, input.dialectOf)).sort(byId),
    relationships: model.relationships.map(packageRelationship).sort(byId),
    metrics: input.metrics.map((compiled) => packageMetric(compiled, input.dialectOf)).sort(byId),
  };
  const text = canonicalJson(document);
  return { document, canonicalJson: text, digest: `sha256:${sha256Hex(text)}`, ossie: ossieDocument(model) };
}

function packageDataset(dataset: DatasetElement, dialectOf: (datasource: string) => ExpressionDialect): PackageDataset {
  const relation = dataset.relation!;
  return {
    id: dataset.id,
    name: dataset.name,
    namespace: dataset.namespace,
    model: dataset.model,
    alias: dataset.alias!,
    description: dataset.osi.description ?? null,
    aiContext: dataset.osi.ai_context ?? null,
    relation: { datasource: relation.datasource, schema: relation.schema, name: relation.name, kind: relation.kind },
    primaryKey: dataset.osi.primary_key ?? relation.primaryKey,
    uniqueKeys: [...(dataset.osi.unique_keys ?? relation.uniqueKeys), ...(dataset.impliedKeys ?? [])],
    role: dataset.osi.role ?? null,
    fields: dataset.fields.map((field) => packageField(field, dialectOf(relation.datasource))),
  };
}

function packageField(field: FieldElement, dialect: ExpressionDialect): PackageField {
  const [only] = field.targets ?? [];
  const column = field.analysis?.plainColumn && only?.kind === 'column' && only.dataset === field.dataset ? only.column : undefined;
  const reads = [...(field.reads ?? [])];
  const enrichment = field.enrichment ?? [];
  // Present only on an enriched field, so the package of a model without one keeps its bytes and digest.
  const enriched = enrichment.length === 0 ? {} : {
    joins: enrichment.map((step) => packageJoin(step, dialect)),
    reads: reads.filter(([dataset, columns]) => dataset !== field.dataset && columns.length > 0).map(([dataset, columns]) => ({ dataset: dataset.id, columns })),
  };
  return {
    id: field.id,
    name: field.name,
    expression: field.expression!,
    sql: field.sql!,
    column: column?.name ?? null,
    columns: reads.find(([dataset]) => dataset === field.dataset)?.[1] ?? [],
    logicalType: field.logicalType,
    nativeType: column?.nativeType ?? null,
    nullable: column?.nullable ?? null,
    isTime: field.osi.dimension?.is_time ?? (field.osi.datatype !== undefined && TEMPORAL_DATATYPES.has(field.osi.datatype)),
    label: field.osi.label ?? null,
    description: field.osi.description ?? null,
    aiContext: (field.osi.ai_context ?? null) as JsonValue | null,
    accessModifier: field.osi.access_modifier ?? 'public',
    ...enriched,
    ...severalDatasources(reads.map(([dataset]) => dataset)),
  };
}

function packageRelationship(relationship: RelationshipElement): PackageRelationship {
  return {
    id: relationship.id,
    name: relationship.name,
    namespace: relationship.namespace,
    from: relationship.from!.id,
    to: relationship.to!.id,
    fromColumns: relationship.fromColumns!.map((column) => column.name),
    toColumns: relationship.toColumns!.map((column) => column.name),
    cardinality: relationship.cardinality!,
    aiContext: relationship.osi.ai_context ?? null,
  };
}

function packageMetric(compiled: CompiledMetric, dialectOf: (datasource: string) => ExpressionDialect): PackageMetric {
  const { metric } = compiled;
  const dialect = dialectOf(compiled.base.relation!.datasource);
  return {
    id: metric.id,
    name: metric.name,
    namespace: metric.namespace,
    model: metric.model,
    expression: metric.expression!,
    sql: compiled.sql,
    fields: compiled.fields.map((field) => field.id),
    metrics: [...new Set((metric.references ?? []).flatMap((reference) => (reference.kind === 'metric' ? [reference.metric.id] : [])))],
    datasets: compiled.datasets.map((dataset) => dataset.id),
    baseDataset: compiled.base.id,
    joins: compiled.steps.map((step) => packageJoin(step, dialect)),
    description: metric.osi.description ?? null,
    aiContext: metric.osi.ai_context ?? null,
    accessModifier: metric.osi.access_modifier ?? 'public',
    ...severalDatasources(compiled.datasets),
  };
}

/** `{datasources}` when the datasets live in more than one, else nothing: a package without such elements keeps its bytes. */
function severalDatasources(datasets: readonly DatasetElement[]): { datasources?: string[] } {
  const datasources = [...new Set(datasets.map((dataset) => dataset.relation!.datasource))].sort();
  return datasources.length > 1 ? { datasources } : {};
}

/** `"customers"."id" = "orders"."customer_id"`: the relationship's column pairs, by dataset alias. */
function packageJoin(step: JoinStep, dialect: ExpressionDialect): PackageJoin {
  const { relationship } = step;
  const quote = (dataset: DatasetElement, column: string) => `${dialect.quoteIdentifier(dataset.alias!)}.${dialect.quoteIdentifier(column)}`;
  const on = relationship.fromColumns!.map((fromColumn, index) =>
    `${quote(relationship.from!, fromColumn.name)} = ${quote(relationship.to!, relationship.toColumns![index]!.name)}`).join(' AND ');
  return { relationship: relationship.id, dataset: step.joined.id, on, fanOut: step.fanOut };
}
