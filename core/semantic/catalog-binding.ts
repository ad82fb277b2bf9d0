/**
 * Validation against the VDB catalog: the relation of every dataset source, every column a field
 * expression, key or relationship names, declared logical types, and whether declared keys are keys.
 * Field expressions are analysed here, since the columns they name are only known from their parse.
 */
import type { CatalogColumn, LogicalType } from '../plugin-api/catalog.js';
import type { VdbRelation, VirtualDatabase } from '../plugin-api/vdb.js';
import type { DiagnosticList } from './diagnostic-list.js';
import type { ColumnReference } from '../plugin-api/sql-grammar.js';
import type { ExpressionAnalyzer } from './expression-analysis.js';
import type { DocumentPath } from './located-document.js';
import { siteAt } from './module-acquisition.js';
import { chosenExpression, dialectsOf, expressionSql, outsideSubset } from './expression-dialects.js';
import type { OsiDatatype } from './module-schemas.js';
import { OSI_AGGREGATES, scanExpression, unavailableFunction } from './osi-expression-subset.js';
import type { DatasetElement, FieldElement, FieldTarget, NamePart, RelationshipElement, SemanticModel } from './model-elements.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import { JoinGraph } from './join-paths.js';
import { candidateHint, didYouMean, NameTable } from './name-matching.js';

/** Logical types a join may compare without a cast. */
const JOIN_COMPATIBLE: Readonly<Partial<Record<LogicalType, string>>> = { integer: 'whole', bigint: 'whole', decimal: 'fraction', float: 'fraction' };

/**
 * The logical types each Foundation `datatype` admits, the first being the type of a computed field that
 * declares it. `Opaque` is a type outside the portable vocabulary: any column, no type for a computed field.
 */
const DATATYPE_LOGICAL_TYPES: Readonly<Record<OsiDatatype, readonly LogicalType[]>> = {
  String: ['string', 'uuid'],
  Integer: ['integer', 'bigint'],
  Decimal: ['decimal'],
  Float: ['float'],
  Boolean: ['boolean'],
  Date: ['date'],
  Time: ['time'],
  DateTime: ['timestamp'],
  DateTimeTz: ['timestamp'],
  Opaque: [],
};

/** What one-part and two-part sources are completed with, and which names a three-part source's database may be. */
export interface SourceDefaults {
  /** The schema of sources that name none (the VDB file's `semantic.defaultSchema`, else the manifest's `defaultSchema`). */
  schema?: { name: string; origin: string };
  /** Per datasource of the VDB, the names a source's first part may give it (its id, database name, aliases, the VDB name). */
  databaseNames: ReadonlyMap<string, readonly string[]>;
}

export interface BindingInputs {
  vdb: VirtualDatabase;
  dialectOf(datasource: string): ExpressionDialect;
  analyzer: ExpressionAnalyzer;
  diagnostics: DiagnosticList;
  sources: SourceDefaults;
}

export async function bindModel(model: SemanticModel, context: BindingInputs): Promise<void> {
  const { vdb, diagnostics } = context;
  const schemas = new NameTable<string>();
  for (const schema of vdb.catalog.schemas) schemas.add(schema, schema);
  for (const scope of model.scopes) {
    if (scope.bindingSchema === undefined) continue;
    const found = schemas.find(scope.bindingSchema);
    if (found) {
      scope.bindingSchema = found;
    } else {
      scope.bindingValid = false;
      diagnostics.add('bind.schema_not_found', siteAt(scope.document, ['binding', 'schema']), `schema:${scope.bindingSchema}`,
        `binding.schema ${scope.bindingSchema} is not a schema of VDB ${vdb.name} ${vdb.version} (it has ${vdb.catalog.schemas.join(', ')})`);
    }
  }
  const catalog = new SourceCatalog(vdb, context.sources);
  for (const dataset of model.datasets) bindDataset(dataset, catalog, context);
  // Relationships first: a field that reads another dataset is judged by how the two are related.
  // A model entry that declares no key at all relies on its relationships' direction for cardinality.
  const keyed = new Set(model.datasets.filter((dataset) => dataset.osi.primary_key || dataset.osi.unique_keys).map((dataset) => `${dataset.namespace}\u0000${dataset.model}`));
  for (const relationship of model.relationships) bindRelationship(relationship, diagnostics, !keyed.has(`${relationship.namespace}\u0000${relationship.model}`));
  for (const dataset of model.datasets) if (dataset.osi.role === 'bridge') checkBridge(dataset, model.relationships, diagnostics);
  await analyzeFields(model, { ...context, joins: new JoinGraph(model.relationships), datasets: model.datasets });
}

/**
 * A declared bridge must be what the Foundation calls one (§6.8.1): a dataset with many-to-one (or
 * one-to-one) relationships to two or more other datasets. Checked only when every relationship from it
 * bound, so a relationship error is not reported a second time as a bridge error.
 */
function checkBridge(dataset: DatasetElement, relationships: readonly RelationshipElement[], diagnostics: DiagnosticList): void {
  const outgoing = relationships.filter((relationship) => relationship.from === dataset);
  if (!dataset.relation || outgoing.some((relationship) => relationship.cardinality === undefined)) return;
  const linked = new Set(outgoing
    .filter((relationship) => relationship.to !== dataset && (relationship.cardinality === 'manyToOne' || relationship.cardinality === 'oneToOne'))
    .map((relationship) => relationship.to));
  if (linked.size >= 2) return;
  diagnostics.add('bind.bridge_invalid', siteAt(dataset.scope.document, [...dataset.path, 'role']), `dataset:${dataset.id}`,
    `dataset ${dataset.id} is declared a bridge but has many-to-one relationships to ${linked.size === 0 ? 'no dataset' : `only ${[...linked].map((other) => other?.id).join(', ')}`}; a bridge links two or more`);
}

/** A name compared as SQL compares identifiers: a quoted part exactly, an unquoted one without case. */
function sameName(part: NamePart, name: string): boolean {
  return part.quoted ? part.name === name : part.name.toLowerCase() === name.toLowerCase();
}

/** Of the candidates a part names: the exact match first, else (unquoted) those equal without case. */
function named<T>(part: NamePart, candidates: readonly T[], nameOf: (candidate: T) => string): T[] {
  const exact = candidates.filter((candidate) => nameOf(candidate) === part.name);
  return exact.length > 0 || part.quoted ? exact : candidates.filter((candidate) => sameName(part, nameOf(candidate)));
}

function written(part: NamePart): string {
  return part.quoted ? `"${part.name.replaceAll('"', '""')}"` : part.name;
}

/** The VDB's schemas (with their datasources) and relations, as sources find them. */
class SourceCatalog {
  readonly schemas: { name: string; datasource: string }[];
  private readonly relations = new Map<string, VdbRelation[]>();

  constructor(readonly vdb: VirtualDatabase, readonly defaults: SourceDefaults) {
    const seen = new Set<string>();
    this.schemas = [];
    for (const relation of vdb.catalog.relations) {
      const key = `${relation.datasource}\u0000${relation.schema}`;
      let list = this.relations.get(key);
      if (!list) this.relations.set(key, (list = []));
      list.push(relation);
    }
    const pairs = [...vdb.schemas.map((schema) => ({ name: schema.name, datasource: schema.datasource })), ...vdb.catalog.relations.map((relation) => ({ name: relation.schema, datasource: relation.datasource }))];
    for (const schema of pairs) {
      const key = `${schema.datasource}\u0000${schema.name}`;
      if (!seen.has(key)) this.schemas.push(schema);
      seen.add(key);
    }
  }

  /** The datasources a source's first part names: by id, database name, an alias of the VDB file, or the VDB's name. */
  datasourcesNamed(part: NamePart): string[] {
    return [...this.defaults.databaseNames].filter(([, names]) => names.some((name) => sameName(part, name))).map(([datasource]) => datasource);
  }

  relationsOf(schema: { name: string; datasource: string }): VdbRelation[] {
    return this.relations.get(`${schema.datasource}\u0000${schema.name}`) ?? [];
  }
}

/**
 * Finds the relation of a dataset's source. `database.schema.relation` names a datasource of the VDB by
 * its id, its database name or an alias the VDB file declares (`semantic.databaseAliases`), and the VDB's
 * own name stands for all of them; a source without a schema takes the document's `binding.schema`, else
 * the default schema of the VDB file or manifest, else the one schema of the VDB that has the relation.
 * Unquoted parts fold case, quoted ones compare exactly, as SQL's identifiers do.
 */
function bindDataset(dataset: DatasetElement, catalog: SourceCatalog, context: BindingInputs): void {
  const { vdb, diagnostics } = context;
  const source = dataset.source;
  if (!source || (!source.schema && !dataset.scope.bindingValid)) return;
  const site = () => siteAt(dataset.scope.document, [...dataset.path, 'source']);
  const target = `dataset:${dataset.id}`;
  let datasources = [...catalog.defaults.databaseNames.keys()];
  if (source.database) {
    datasources = catalog.datasourcesNamed(source.database);
    if (datasources.length === 0) {
      const known = [...catalog.defaults.databaseNames.values()].flat();
      diagnostics.add('bind.database_not_found', site, `database:${source.database.name}`,
        `source of dataset ${dataset.id}: ${written(source.database)} names no datasource of VDB ${vdb.name} ${vdb.version} (its datasources answer to ${[...new Set(known)].join(', ')}); declare it under semantic.databaseAliases of the VDB file`);
      return;
    }
  }
  const inDatasources = catalog.schemas.filter((schema) => datasources.includes(schema.datasource));
  const schemaPart: NamePart | undefined = source.schema
    ?? (dataset.scope.bindingSchema !== undefined ? { name: dataset.scope.bindingSchema, quoted: true } : undefined)
    ?? (catalog.defaults.schema ? { name: catalog.defaults.schema.name, quoted: false } : undefined);
  let candidates: { name: string; datasource: string }[];
  if (schemaPart) {
    candidates = named(schemaPart, inDatasources, (schema) => schema.name);
    if (candidates.length === 0) {
      const origin = source.schema ? '' : ` (${dataset.scope.bindingSchema !== undefined ? 'binding.schema of the document' : catalog.defaults.schema?.origin})`;
      diagnostics.add('bind.schema_not_found', site, `schema:${schemaPart.name}`,
        `source of dataset ${dataset.id}: ${written(schemaPart)}${origin} is not a schema of VDB ${vdb.name} ${vdb.version}${source.database ? ` in ${written(source.database)}` : ''} (it has ${inDatasources.map((schema) => schema.name).join(', ')})`);
      return;
    }
  } else {
    candidates = inDatasources.filter((schema) => named(source.relation, catalog.relationsOf(schema), (relation) => relation.name).length > 0);
    if (candidates.length > 1) {
      diagnostics.add('resolve.unbound_source', site, target,
        `source "${dataset.osi.source}" of dataset ${dataset.id} names no schema, and schemas ${candidates.map((schema) => schema.name).join(', ')} of VDB ${vdb.name} ${vdb.version} all have it; set semantic.defaultSchema in the VDB file (or defaultSchema in the manifest)`);
      return;
    }
    if (candidates.length === 0) candidates = inDatasources;
  }
  const relations = candidates.flatMap((schema) => named(source.relation, catalog.relationsOf(schema), (relation) => relation.name));
  const [relation] = relations;
  if (!relation || relations.length > 1) {
    const where = candidates.map((schema) => schema.name).join(', ');
    const names = candidates.flatMap((schema) => catalog.relationsOf(schema).map((other) => other.name));
    diagnostics.add('bind.relation_not_found', site, `relation:${candidates.length === 1 ? `${candidates[0]?.name}.` : ''}${source.relation.name}`,
      relation
        ? `source of dataset ${dataset.id}: ${written(source.relation)} matches ${relations.map((other) => `${other.schema}.${other.name}`).join(' and ')} of VDB ${vdb.name} ${vdb.version}, which differ only in case; quote it`
        : `source of dataset ${dataset.id}: VDB ${vdb.name} ${vdb.version} has no relation ${written(source.relation)} in ${candidates.length === 1 ? 'schema' : 'schemas'} ${where}${didYouMean(source.relation.name, names)}`);
    return;
  }
  dataset.relation = relation;
  checkKeys(dataset, relation, diagnostics);
}

const columnTables = new WeakMap<VdbRelation, NameTable<CatalogColumn>>();

/** The columns of a relation by name, built once per relation: every field of a dataset looks them up. */
function columnsOf(relation: VdbRelation): NameTable<CatalogColumn> {
  let table = columnTables.get(relation);
  if (!table) {
    table = new NameTable<CatalogColumn>();
    for (const column of relation.columns) table.add(column.name, column);
    columnTables.set(relation, table);
  }
  return table;
}

/** Declared keys must name columns; on a table they should be keys the database enforces. */
function checkKeys(dataset: DatasetElement, relation: VdbRelation, diagnostics: DiagnosticList): void {
  const columns = columnsOf(relation);
  const enforced = [relation.primaryKey, ...relation.uniqueKeys].filter((key) => key.length > 0);
  const declared: { key: string[]; path: DocumentPath }[] = [];
  if (dataset.osi.primary_key) declared.push({ key: dataset.osi.primary_key, path: [...dataset.path, 'primary_key'] });
  (dataset.osi.unique_keys ?? []).forEach((key, index) => declared.push({ key, path: [...dataset.path, 'unique_keys', index] }));
  for (const { key, path } of declared) {
    const found = key.map((name, index) => {
      const column = columns.find(name);
      if (!column) {
        diagnostics.add('bind.column_not_found', siteAt(dataset.scope.document, [...path, index]), `column:${relation.schema}.${relation.name}.${name}`,
          `key of dataset ${dataset.id}: relation ${relation.schema}.${relation.name} has no column ${name}${candidateHint(name, columns.names())}`);
      }
      return column?.name;
    });
    if (found.some((name) => name === undefined) || relation.kind !== 'table') continue;
    if (!enforced.some((key) => sameColumns(key, found as string[]))) {
      diagnostics.add('bind.key_not_enforced', siteAt(dataset.scope.document, path), `relation:${relation.schema}.${relation.name}`,
        `key (${key.join(', ')}) of dataset ${dataset.id} is not a primary key or unique constraint of table ${relation.schema}.${relation.name}`);
    }
  }
}

function sameColumns(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((column) => b.includes(column));
}

/** What a field's binding needs besides the binding inputs: the model's datasets and how they are related. */
interface FieldInputs extends BindingInputs {
  joins: JoinGraph;
  datasets: readonly DatasetElement[];
}

async function analyzeFields(model: SemanticModel, context: FieldInputs): Promise<void> {
  const { analyzer, diagnostics } = context;
  const pending: { field: FieldElement; dialect: ExpressionDialect }[] = [];
  for (const dataset of model.datasets) {
    if (!dataset.relation) continue;
    const dialect = context.dialectOf(dataset.relation.datasource);
    for (const field of dataset.fields) {
      const chosen = chosenExpression(field.osi.expression, dataset.modelDialect, field.path);
      if (!chosen) {
        diagnostics.add('compile.dialect_unavailable', siteAt(dataset.scope.document, [...field.path, 'expression']), `field:${field.id}`,
          `field ${field.id} has no expression in SQL (OSI_SQL_2026, ANSI_SQL or a vendor's SQL dialect), only in ${dialectsOf(field.osi.expression)}`);
        continue;
      }
      field.expression = chosen.text;
      field.expressionPath = chosen.path;
      field.expressionDialect = chosen.dialect;
      field.expressionLabel = chosen.label;
      pending.push({ field, dialect });
    }
  }
  const byDialect = new Map<ExpressionDialect, string[]>();
  for (const { field, dialect } of pending) {
    let texts = byDialect.get(dialect);
    if (!texts) byDialect.set(dialect, (texts = []));
    texts.push(field.expression as string);
  }
  for (const [dialect, texts] of byDialect) await analyzer.prepare(dialect, texts);
  for (const { field, dialect } of pending) bindField(field, dialect, context);
}

function bindField(field: FieldElement, dialect: ExpressionDialect, context: FieldInputs): void {
  const { diagnostics } = context;
  const dataset = field.dataset;
  const relation = dataset.relation as VdbRelation;
  const document = dataset.scope.document;
  const at = () => siteAt(document, field.expressionPath as DocumentPath);
  const { deferredFrame: frame, nestedWindow } = scanExpression(field.expression as string, () => false, false);
  if (frame !== undefined) {
    diagnostics.add('compile.deferred_frame_mode', at, `field:${field.id}`, `field ${field.id}, ${field.expression}: ${frame}; the OSI Foundation defers it (§6.10.6)`);
    return;
  }
  if (nestedWindow !== undefined) {
    diagnostics.add('compile.nested_window', at, `field:${field.id}`, `field ${field.id}, ${field.expression}: the window function ${nestedWindow} is inside another window function`);
    return;
  }
  const osi = field.expressionDialect !== 'ansi';
  const scanned = osi ? scanExpression(field.expression as string, (name) => OSI_AGGREGATES.has(name), true) : undefined;
  if (scanned?.outsideSubset !== undefined) {
    diagnostics.add('compile.expression_outside_subset', at, `field:${field.id}`, `field ${field.id}, ${field.expression}: ${outsideSubset(field.expressionLabel, scanned.outsideSubset)}`);
    return;
  }
  const written = expressionSql({ text: field.expression as string, dialect: field.expressionDialect ?? 'ansi', label: field.expressionLabel }, dialect, `field ${field.id}`);
  if (!written.ok) {
    diagnostics.add(written.code, at, `field:${field.id}`, `${written.message} (datasource ${relation.datasource}, ${dialect.grammar.label})`);
    return;
  }
  const missing = scanned && !written.translated ? unavailableFunction(scanned, dialect.functionPolicy.allowed) : undefined;
  if (missing !== undefined) {
    diagnostics.add('compile.function_unavailable', at, `field:${field.id}`,
      `field ${field.id}, ${field.expression}: datasource ${relation.datasource} (${dialect.grammar.label}) has no function ${missing}`);
    return;
  }
  field.dialectSql = written.sql;
  const outcome = context.analyzer.analyze(dialect, written.sql);
  if (!outcome.ok) {
    diagnostics.add('compile.expression_invalid', at, `field:${field.id}`, `field ${field.id}, ${field.expression}: ${outcome.message}`);
    return;
  }
  if (outcome.analysis.hasAggregate) {
    diagnostics.add('compile.aggregate_in_field', at, `field:${field.id}`, `field ${field.id} aggregates (${field.expression}); fields are row-level, metrics aggregate`);
    return;
  }
  field.analysis = outcome.analysis;
  const columns = columnsOf(relation);
  const targets = outcome.analysis.references.map((reference) => targetOf(field, reference, columns, dialect, context));
  targets.forEach((target, index) => {
    if (target !== undefined) return;
    const reference = outcome.analysis.references[index] as ColumnReference;
    const name = reference.parts.at(-1) as string;
    diagnostics.add('bind.column_not_found', at, `column:${relation.schema}.${relation.name}.${name}`,
      `field ${field.id} reads ${reference.parts.join('.')}, but relation ${relation.schema}.${relation.name} has no such column${candidateHint(name, columns.names())}`);
  });
  if (targets.some((target) => target === undefined || target === null)) return;
  field.targets = targets as FieldTarget[];
  field.columns = field.targets.flatMap((target) => (target.kind === 'column' && target.dataset === dataset ? [target.column] : []));
  const [only] = field.targets;
  // A field that is one column (of its relation or of a dataset it enriches from) has that column's type.
  const column = outcome.analysis.plainColumn && only?.kind === 'column' ? only.column : undefined;
  const declared = field.osi.logical_type;
  if (column && declared !== undefined && declared !== column.logicalType) {
    diagnostics.add('bind.type_mismatch', siteAt(document, [...field.path, 'logical_type']), `column:${relation.schema}.${relation.name}.${column.name}`,
      `field ${field.id} declares logical_type ${declared}, column ${relation.schema}.${relation.name}.${column.name} is ${column.logicalType} (${column.nativeType})`);
    return;
  }
  const datatype = field.osi.datatype;
  if (column && datatype !== undefined && datatype !== 'Opaque' && !DATATYPE_LOGICAL_TYPES[datatype].includes(column.logicalType)) {
    diagnostics.add('bind.type_mismatch', siteAt(document, [...field.path, 'datatype']), `column:${relation.schema}.${relation.name}.${column.name}`,
      `field ${field.id} declares datatype ${datatype}, column ${relation.schema}.${relation.name}.${column.name} is ${column.logicalType} (${column.nativeType})`);
    return;
  }
  field.logicalType = column?.logicalType ?? declared ?? (datatype === undefined ? null : DATATYPE_LOGICAL_TYPES[datatype][0] ?? null);
}

/** The Foundation's verdict on a field reading a field of a dataset it cannot enrich from (§4.3.1). */
const OTHER_DATASET_CODES = {
  finer: 'compile.field_finer_grain_reference',
  manyToMany: 'compile.field_across_many_to_many',
} as const;

/**
 * What a name of a field's expression reads (null when refused, diagnosed here; undefined when unknown).
 * A name of its own dataset is a column of its relation first (what every field read before fields could
 * name fields), else a field of the dataset. `other.name` names a dataset of the document's namespaces: the
 * Foundation enriches each row with its field (or, failing a field of that name, its column) when it is
 * reached along many-to-one relationships, and refuses it towards a many side or across many-to-many.
 */
function targetOf(field: FieldElement, reference: ColumnReference, columns: NameTable<CatalogColumn>, dialect: ExpressionDialect, context: FieldInputs): FieldTarget | null | undefined {
  const home = field.dataset;
  const relation = home.relation as VdbRelation;
  const column = columnOf(reference, home, relation, columns, dialect);
  if (column) return { kind: 'column', dataset: home, column };
  const same = (a: string, b: string) => (dialect.caseInsensitiveNames ? a.toLowerCase() === b.toLowerCase() : a === b);
  const name = reference.parts.at(-1) as string;
  const fieldNamed = (dataset: DatasetElement) => dataset.fields.find((candidate) => same(candidate.name, name));
  if (reference.parts.length === 1 || (reference.parts.length === 2 && same(reference.parts[0] as string, home.name))) {
    const own = fieldNamed(home);
    if (own) return { kind: 'field', field: own };
  }
  if (reference.parts.length !== 2) return undefined;
  const visible = [home.namespace, ...home.scope.imports];
  const other = context.datasets.find((dataset) => dataset !== home && visible.includes(dataset.namespace) && same(dataset.name, reference.parts[0] as string));
  if (!other?.relation) return undefined;
  const reach = context.joins.reach(home, other);
  if (reach === 'none') return undefined;
  if (reach === 'enrich') {
    const enriching = fieldNamed(other);
    if (enriching) return { kind: 'field', field: enriching };
    const otherColumn = columnsOf(other.relation).find(name, { foldCase: dialect.caseInsensitiveNames });
    return otherColumn && { kind: 'column', dataset: other, column: otherColumn };
  }
  const written = reference.parts.join('.');
  const why = {
    finer: `${other.id} is on the many side of ${home.id}, so a row of ${home.id} has many values of it; aggregate it in a metric`,
    manyToMany: `${home.id} and ${other.id} are related many-to-many; aggregate it in a metric`,
  }[reach];
  context.diagnostics.add(OTHER_DATASET_CODES[reach], siteAt(home.scope.document, field.expressionPath as DocumentPath), `field:${field.id}`,
    `field ${field.id} reads ${written} of dataset ${other.id}: ${why}`);
  return null;
}

/**
 * The column a field's reference names: `column`, `<dataset or relation>.column` or
 * `schema.relation.column`, compared as the dialect compares names: exactly where the grammar already
 * folded unquoted names (PostgreSQL), else without case.
 */
function columnOf(reference: ColumnReference, dataset: DatasetElement, relation: VdbRelation, columns: NameTable<CatalogColumn>, dialect: ExpressionDialect): CatalogColumn | undefined {
  const foldCase = dialect.caseInsensitiveNames;
  const same = (a: string, b: string) => (foldCase ? a.toLowerCase() === b.toLowerCase() : a === b);
  const parts = reference.parts;
  const qualifier = parts.slice(0, -1);
  const qualified = qualifier.length === 0
    || (qualifier.length === 1 && (same(qualifier[0] as string, dataset.name) || same(qualifier[0] as string, relation.name)))
    || (qualifier.length === 2 && same(qualifier[0] as string, relation.schema) && same(qualifier[1] as string, relation.name));
  return qualified ? columns.find(parts.at(-1) as string, { foldCase }) : undefined;
}

function bindRelationship(relationship: RelationshipElement, diagnostics: DiagnosticList, keylessModel: boolean): void {
  const { from, to } = relationship;
  if (!from?.relation || !to?.relation || relationship.osi.from_columns.length !== relationship.osi.to_columns.length) return;
  const document = relationship.scope.document;
  const sideColumns = (side: 'from_columns' | 'to_columns', relation: VdbRelation) => {
    const columns = columnsOf(relation);
    return relationship.osi[side].map((name, index) => {
      const column = columns.find(name);
      if (!column) {
        diagnostics.add('bind.column_not_found', siteAt(document, [...relationship.path, side, index]), `column:${relation.schema}.${relation.name}.${name}`,
          `relationship ${relationship.id}, ${side}: relation ${relation.schema}.${relation.name} has no column ${name}${candidateHint(name, columns.names())}`);
      }
      return column;
    });
  };
  const fromColumns = sideColumns('from_columns', from.relation);
  const toColumns = sideColumns('to_columns', to.relation);
  if (fromColumns.some((column) => !column) || toColumns.some((column) => !column)) return;
  let compatible = true;
  fromColumns.forEach((fromColumn, index) => {
    const toColumn = toColumns[index] as CatalogColumn;
    const a = (fromColumn as CatalogColumn).logicalType;
    const b = toColumn.logicalType;
    if (a === b || (JOIN_COMPATIBLE[a] !== undefined && JOIN_COMPATIBLE[a] === JOIN_COMPATIBLE[b])) return;
    compatible = false;
    diagnostics.add('bind.type_mismatch', siteAt(document, [...relationship.path, 'to_columns', index]), `column:${to.relation?.schema}.${to.relation?.name}.${toColumn.name}`,
      `relationship ${relationship.id} joins ${from.relation?.name}.${(fromColumn as CatalogColumn).name} (${a}) to ${to.relation?.name}.${toColumn.name} (${b})`);
  });
  if (!compatible) return;
  relationship.fromColumns = fromColumns as CatalogColumn[];
  relationship.toColumns = toColumns as CatalogColumn[];
  const toNames = relationship.toColumns.map((column) => column.name);
  // In a model that declares no key, where `to` has none either (its relation neither), the relationship's
  // own word holds (core spec: `to` is the one side, its columns "primary or unique key columns"): they are
  // a key of `to`, which its rows are de-duplicated by. A model that declares keys elsewhere said which it has.
  const keyless = keylessModel && keysOf(to).length === 0;
  if (keyless && !(to.impliedKeys ?? []).some((key) => sameColumns(key, toNames))) (to.impliedKeys ??= []).push(toNames);
  const toUnique = keyless || keysOf(to).some((key) => sameColumns(key, toNames));
  if (!toUnique) {
    diagnostics.add('bind.relationship_target_not_key', siteAt(document, [...relationship.path, 'to_columns']), `relationship:${relationship.id}`,
      `relationship ${relationship.id}: (${toNames.join(', ')}) is not a primary or unique key of dataset ${to.id}, so a row may match several: it is many-to-many`);
  }
  const fromNames = relationship.fromColumns.map((column) => column.name);
  const fromUnique = keysOf(from).some((key) => sameColumns(key, fromNames));
  relationship.cardinality = fromUnique ? (toUnique ? 'oneToOne' : 'oneToMany') : (toUnique ? 'manyToOne' : 'manyToMany');
}

/** The keys of a dataset: those of its relation and those it declares. */
function keysOf(dataset: DatasetElement): string[][] {
  const relation = dataset.relation as VdbRelation;
  return [relation.primaryKey, ...relation.uniqueKeys, dataset.osi.primary_key ?? [], ...(dataset.osi.unique_keys ?? [])].filter((key) => key.length > 0);
}
