/**
 * Resolution: which namespace each document is in, what it imports, which schema binds its unqualified
 * sources, and what every name means. Definitions must be unique in their scope; a reference resolves in
 * the document's own namespace first, then in its imports, and must not match in two imports.
 */
import type { DiagnosticCode } from './diagnostic-codes.js';
import type { DiagnosticList } from './diagnostic-list.js';
import type { DocumentPath } from './located-document.js';
import { siteAt, type AcquiredDocument, type AcquiredModule } from './module-acquisition.js';
import type { DatasetElement, DocumentScope, MetricElement, NamePart, RelationshipElement, SemanticModel } from './model-elements.js';
import { didYouMean, NameTable } from './name-matching.js';

type ReferenceFailure = Extract<DiagnosticCode, 'resolve.unknown_dataset' | 'resolve.unknown_metric' | 'resolve.ambiguous_reference' | 'resolve.namespace_not_imported'>;

export type Lookup<T> = { ok: true; value: T } | { ok: false; code: ReferenceFailure; message: string };

interface NamespaceTables {
  datasets: NameTable<DatasetElement>;
  metrics: NameTable<MetricElement>;
  relationships: NameTable<RelationshipElement>;
}

type Kind = 'dataset' | 'metric';
const TABLE_OF: Readonly<Record<Kind, 'datasets' | 'metrics'>> = { dataset: 'datasets', metric: 'metrics' };

/** Every definition of the module by namespace, and the lookup rules of references. */
export class ModelNames {
  private readonly namespaces = new Map<string, NamespaceTables>();

  tables(namespace: string): NamespaceTables {
    let tables = this.namespaces.get(namespace);
    if (!tables) {
      tables = { datasets: new NameTable(), metrics: new NameTable(), relationships: new NameTable() };
      this.namespaces.set(namespace, tables);
    }
    return tables;
  }

  has(namespace: string): boolean {
    return this.namespaces.has(namespace);
  }

  /** Resolves `name` or `namespace.name` as the document of `scope` sees it. */
  lookup<K extends Kind>(scope: DocumentScope, kind: K, parts: string[]): Lookup<K extends 'dataset' ? DatasetElement : MetricElement> {
    type Found = K extends 'dataset' ? DatasetElement : MetricElement;
    const table = TABLE_OF[kind];
    const written = parts.join('.');
    const unknown = (): Lookup<Found> => {
      const visible = [scope.namespace, ...scope.imports].flatMap((namespace) => this.tables(namespace)[table].names());
      return { ok: false, code: kind === 'dataset' ? 'resolve.unknown_dataset' : 'resolve.unknown_metric', message: `no ${kind} "${written}" in namespace ${[scope.namespace, ...scope.imports].join(' or ')}${didYouMean(parts.at(-1) ?? '', visible)}` };
    };
    if (parts.length === 2) {
      const [namespace, name] = parts as [string, string];
      if (namespace !== scope.namespace && !scope.imports.includes(namespace)) {
        if (!this.has(namespace)) return unknown();
        return { ok: false, code: 'resolve.namespace_not_imported', message: `"${written}" is in namespace ${namespace}, which document ${scope.document.path} does not import` };
      }
      const found = this.tables(namespace)[table].find(name) as Found | undefined;
      return found ? { ok: true, value: found } : unknown();
    }
    if (parts.length !== 1) return unknown();
    const name = parts[0] as string;
    const own = this.tables(scope.namespace)[table].find(name) as Found | undefined;
    if (own) return { ok: true, value: own };
    const imported = scope.imports
      .map((namespace) => ({ namespace, found: this.tables(namespace)[table].find(name) as Found | undefined }))
      .filter((entry): entry is { namespace: string; found: Found } => entry.found !== undefined);
    if (imported.length > 1) {
      return { ok: false, code: 'resolve.ambiguous_reference', message: `"${name}" is a ${kind} of namespaces ${imported.map((entry) => entry.namespace).join(' and ')}; qualify it` };
    }
    return imported[0] ? { ok: true, value: imported[0].found } : unknown();
  }
}

/** Builds the model's elements and resolves every name that needs no expression parsing. */
export function resolveModel(module: AcquiredModule, diagnostics: DiagnosticList): { model: SemanticModel; names: ModelNames } {
  const names = new ModelNames();
  const scopes: DocumentScope[] = module.documents.map((document) => ({
    document,
    namespace: document.value.namespace ?? module.manifest.namespace,
    imports: [],
    bindingSchema: document.value.binding?.schema,
    bindingValid: true,
  }));
  for (const scope of scopes) names.tables(scope.namespace);
  for (const scope of scopes) {
    (scope.document.value.imports ?? []).forEach((namespace, index) => {
      if (names.has(namespace)) {
        if (namespace !== scope.namespace) scope.imports.push(namespace);
      } else {
        diagnostics.add('resolve.unknown_import', siteAt(scope.document, ['imports', index]), `namespace:${namespace}`,
          `document ${scope.document.path} imports namespace ${namespace}, which no document of module ${module.manifest.name} declares${didYouMean(namespace, scopes.map((other) => other.namespace))}`);
      }
    });
  }
  const model: SemanticModel = { scopes, datasets: [], relationships: [], metrics: [] };
  for (const scope of scopes) defineElements(scope, names, model, diagnostics);
  reportCollisions(model, diagnostics);
  for (const relationship of model.relationships) resolveRelationship(relationship, names, diagnostics);
  return { model, names };
}

/** Names the OSI Foundation reserves for deferred features (§4.6.2), compared without case. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(['GRAIN', 'FILTER', 'QUERY_FILTER']);

function checkReserved(document: AcquiredDocument, path: DocumentPath, kind: string, id: string, name: string, diagnostics: DiagnosticList): void {
  if (!RESERVED_NAMES.has(name.toUpperCase())) return;
  diagnostics.add('resolve.reserved_name', siteAt(document, [...path, 'name']), `${kind}:${id}`,
    `${kind} ${id} is named ${name}, which the OSI Foundation reserves`);
}

/**
 * Datasets, relationships and metrics of a namespace share one namespace in the OSI Foundation, where
 * names compare normalised, i.e. without case (§4.6.3, expression_language.md): a second definition whose
 * normalised name is taken is a collision. Exact duplicates of one kind are reported when they are defined.
 */
function reportCollisions(model: SemanticModel, diagnostics: DiagnosticList): void {
  const seen = new Map<string, { kind: string; element: DatasetElement | RelationshipElement | MetricElement }>();
  const entries = [
    ...model.datasets.map((element) => ({ kind: 'dataset', element })),
    ...model.relationships.map((element) => ({ kind: 'relationship', element })),
    ...model.metrics.map((element) => ({ kind: 'metric', element })),
  ];
  for (const entry of entries) {
    const { element } = entry;
    const key = `${element.namespace}.${element.name.toUpperCase()}`;
    const first = seen.get(key);
    if (!first) {
      seen.set(key, entry);
      continue;
    }
    const firstAt = siteAt(first.element.scope.document, first.element.path);
    diagnostics.add('resolve.name_collision', siteAt(element.scope.document, [...element.path, 'name']), `${entry.kind}:${element.id}`,
      `${entry.kind} ${element.name} collides with ${first.kind} ${first.element.name} of namespace ${element.namespace} (at ${firstAt.document}:${firstAt.location.line}): datasets, relationships and metrics share one namespace, and names compare without case`);
  }
}

function defineElements(scope: DocumentScope, names: ModelNames, model: SemanticModel, diagnostics: DiagnosticList): void {
  const tables = names.tables(scope.namespace);
  const define = <T extends { id: string; path: DocumentPath }>(table: NameTable<T>, kind: string, element: T & { name: string }): boolean => {
    checkReserved(scope.document, element.path, kind, element.id, element.name, diagnostics);
    const first = table.add(element.name, element);
    if (!first) return true;
    const firstAt = siteAt(scope.document, first.path);
    diagnostics.add('resolve.ambiguous_definition', siteAt(scope.document, [...element.path, 'name']), `${kind}:${element.id}`,
      `${kind} ${element.name} is defined twice in namespace ${scope.namespace} (first at ${firstAt.document}:${firstAt.location.line})`);
    return false;
  };
  scope.document.value.semantic_model.forEach((osiModel, modelIndex) => {
    const base = (kind: string, index: number, name: string) => ({
      id: `${scope.namespace}.${name}`, name, namespace: scope.namespace, model: osiModel.name, modelDialect: osiModel.dialect, scope,
      path: ['semantic_model', modelIndex, kind, index] as DocumentPath,
    });
    osiModel.datasets.forEach((osi, index) => {
      const dataset: DatasetElement = { ...base('datasets', index, osi.name), osi, fields: [] };
      if (!define(tables.datasets, 'dataset', dataset)) return;
      model.datasets.push(dataset);
      defineFields(dataset, diagnostics);
      resolveSource(dataset, diagnostics);
    });
    (osiModel.relationships ?? []).forEach((osi, index) => {
      const relationship: RelationshipElement = { ...base('relationships', index, osi.name), osi };
      if (define(tables.relationships, 'relationship', relationship)) model.relationships.push(relationship);
    });
    (osiModel.metrics ?? []).forEach((osi, index) => {
      const metric: MetricElement = { ...base('metrics', index, osi.name), osi };
      if (define(tables.metrics, 'metric', metric)) model.metrics.push(metric);
    });
  });
}

function defineFields(dataset: DatasetElement, diagnostics: DiagnosticList): void {
  const seen = new NameTable<DocumentPath>();
  (dataset.osi.fields ?? []).forEach((osi, index) => {
    const path = [...dataset.path, 'fields', index];
    checkReserved(dataset.scope.document, path, 'field', `${dataset.id}.${osi.name}`, osi.name, diagnostics);
    if (seen.add(osi.name, path)) {
      diagnostics.add('resolve.ambiguous_definition', siteAt(dataset.scope.document, [...path, 'name']), `field:${dataset.id}.${osi.name}`,
        `field ${osi.name} is defined twice in dataset ${dataset.id}`);
      return;
    }
    dataset.fields.push({ id: `${dataset.id}.${osi.name}`, name: osi.name, dataset, path, osi, logicalType: null });
  });
}

/** `"My Table"` or `sales.orders` into its parts, each with whether it was quoted; undefined when it is not a dotted name. */
function splitNameParts(text: string): NamePart[] | undefined {
  const parts: NamePart[] = [];
  const pattern = /\s*(?:"((?:[^"]|"")+)"|([A-Za-z_][A-Za-z0-9_$]*))\s*(\.|$)/y;
  let match: RegExpExecArray | null;
  let end = 0;
  while (end < text.length && (match = pattern.exec(text)) !== null) {
    parts.push(match[1] !== undefined ? { name: match[1].replaceAll('""', '"'), quoted: true } : { name: match[2] as string, quoted: false });
    end = pattern.lastIndex;
    if (match[3] === '') break;
  }
  return end === text.length && parts.length > 0 && !text.trimEnd().endsWith('.') ? parts : undefined;
}

/** `"My Table"` or `sales.orders` into its parts, unquoted; undefined when it is not a dotted name. */
function splitQualifiedName(text: string): string[] | undefined {
  return splitNameParts(text)?.map((part) => part.name);
}

/**
 * `relation`, `schema.relation` or `database.schema.relation` (the Ossie spec's form). Which datasource,
 * schema and relation they name is decided against the VDB's catalog when the model is bound.
 */
function resolveSource(dataset: DatasetElement, diagnostics: DiagnosticList): void {
  const parts = splitNameParts(dataset.osi.source);
  if (!parts || parts.length > 3) {
    diagnostics.add('resolve.source_invalid', siteAt(dataset.scope.document, [...dataset.path, 'source']), `dataset:${dataset.id}`,
      `source "${dataset.osi.source}" of dataset ${dataset.id} is not a relation name (relation, schema.relation or database.schema.relation)`);
    return;
  }
  const [relation, schema, database] = [...parts].reverse() as [NamePart, NamePart | undefined, NamePart | undefined];
  dataset.source = { relation, ...(schema ? { schema } : {}), ...(database ? { database } : {}) };
}

function resolveRelationship(relationship: RelationshipElement, names: ModelNames, diagnostics: DiagnosticList): void {
  const document = relationship.scope.document;
  const target = `relationship:${relationship.id}`;
  for (const side of ['from', 'to'] as const) {
    const written = relationship.osi[side];
    const parts = splitQualifiedName(written) ?? [written];
    const found = names.lookup(relationship.scope, 'dataset', parts);
    if (found.ok) {
      relationship[side] = found.value;
    } else {
      diagnostics.add(found.code, siteAt(document, [...relationship.path, side]), target, `relationship ${relationship.id}, ${side}: ${found.message}`);
    }
  }
  const { from_columns: fromColumns, to_columns: toColumns } = relationship.osi;
  if (fromColumns.length !== toColumns.length) {
    diagnostics.add('resolve.relationship_arity_mismatch', siteAt(document, [...relationship.path, 'to_columns']), target,
      `relationship ${relationship.id} joins ${fromColumns.length} from_columns to ${toColumns.length} to_columns`);
  }
}
