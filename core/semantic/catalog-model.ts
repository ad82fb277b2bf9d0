/**
 * A starter model derived from a VDB catalog, as an Apache Ossie document (it validates against Ossie's
 * JSON Schema: `version`, Ossie's keys only): one dataset per relation, one field per column (with Ossie's
 * `datatype` of its logical type, time columns marked as time dimensions), keys from the catalog,
 * relationships from foreign keys between relations of the VDB. No metrics: those need a human. Used by
 * the `catalog` provider and by `vdb-service semantic scaffold`.
 */
import { Document, isCollection, isPair, isScalar, visit } from 'yaml';
import type { CatalogColumn } from '../plugin-api/catalog.js';
import type { VdbRelation, VirtualDatabase } from '../plugin-api/vdb.js';
import { sha256Hex } from './digests.js';
import { ExpressionAnalyzer } from './expression-analysis.js';
import { OSSIE_VERSION } from './ossie-document.js';
import { datatypeOf } from './ossie-export.js';
import { OSI_YAML_MEDIA_TYPE, type ExpressionDialect } from '../plugin-api/semantic-provider.js';

export interface GeneratedModule {
  /** manifest.yaml first, then the document, as path and text. */
  files: { path: string; text: string }[];
  /** sha256 (hex) of manifest.yaml: what a VDB reference pins. */
  manifestSha256: string;
}

export interface CatalogModuleOptions {
  name: string;
  version: string;
  /** Only relations of these schemas; all of the VDB's when absent. */
  schemas?: readonly string[];
}

const TIME_TYPES: ReadonlySet<string> = new Set(['date', 'time', 'timestamp']);

/** Names the OSI Foundation reserves (docs/semantic.md): a column or relation so named gets a `_` suffix. */
const RESERVED: ReadonlySet<string> = new Set(['GRAIN', 'FILTER', 'QUERY_FILTER']);

/** A model name must be a plain identifier, and not a reserved one: other characters become `_`. */
function identifierFor(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_]/g, '_');
  const identifier = /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
  return RESERVED.has(identifier.toUpperCase()) ? `${identifier}_` : identifier;
}

/**
 * Gives each name a unique identifier, prefixing `prefix_` (then a number) where two would collide. Names
 * compare without case, as the Foundation compares them (`Orders` and `orders` collide).
 */
function uniqueIdentifiers<T>(items: readonly T[], name: (item: T) => string, prefix: (item: T) => string): Map<T, string> {
  const key = (item: T) => identifierFor(name(item)).toLowerCase();
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  const used = new Set<string>();
  const result = new Map<T, string>();
  for (const item of items) {
    const plain = identifierFor(name(item));
    let chosen = (counts.get(key(item)) ?? 0) > 1 ? identifierFor(`${prefix(item)}_${name(item)}`) : plain;
    for (let suffix = 2; used.has(chosen.toLowerCase()); suffix++) chosen = `${plain}_${suffix}`;
    used.add(chosen.toLowerCase());
    result.set(item, chosen);
  }
  return result;
}

/** A semantic module derived from the VDB's catalog: one dataset per relation, relationships from foreign keys. */
export async function catalogModule(vdb: VirtualDatabase, dialectOf: (datasource: string) => ExpressionDialect, options: CatalogModuleOptions): Promise<GeneratedModule> {
  const relations = vdb.catalog.relations.filter((relation) => !options.schemas || options.schemas.includes(relation.schema));
  const datasetNames = uniqueIdentifiers(relations, (relation) => relation.name, (relation) => relation.schema);
  const columnText = await columnExpressions(relations, dialectOf);
  const namespace = identifierFor(vdb.name);
  const byName = new Map(relations.map((relation) => [`${relation.schema}.${relation.name}`, relation]));

  const datasets = relations.map((relation) => {
    const fieldNames = uniqueIdentifiers(relation.columns, (column) => column.name, () => 'column');
    return {
      name: datasetNames.get(relation),
      source: `${relation.schema}.${relation.name}`,
      ...(relation.primaryKey.length > 0 ? { primary_key: relation.primaryKey } : {}),
      ...(relation.uniqueKeys.length > 0 ? { unique_keys: relation.uniqueKeys } : {}),
      description: `${relation.kind === 'view' ? 'View' : 'Table'} ${relation.schema}.${relation.name}`,
      fields: relation.columns.map((column) => ({
        name: fieldNames.get(column),
        expression: { dialects: [{ dialect: 'ANSI_SQL', expression: columnText.get(column) }] },
        ...(TIME_TYPES.has(column.logicalType) ? { dimension: { is_time: true } } : {}),
        datatype: datatypeOf(column),
      })),
    };
  });
  const foreignKeys = relations.flatMap((relation) => relation.foreignKeys
    .map((key) => ({ relation, key, target: byName.get(`${key.referencedSchema}.${key.referencedRelation}`) }))
    .filter((entry): entry is typeof entry & { target: VdbRelation } => entry.target !== undefined));
  const relationshipNames = uniqueIdentifiers(foreignKeys, (entry) => entry.key.name, (entry) => entry.relation.schema);
  const relationships = foreignKeys.map((entry) => ({
    name: relationshipNames.get(entry),
    from: datasetNames.get(entry.relation),
    to: datasetNames.get(entry.target),
    from_columns: entry.key.columns,
    to_columns: entry.key.referencedColumns,
  }));

  // The namespace is the manifest's; every source names its schema, so no binding is needed.
  const osi = {
    version: OSSIE_VERSION,
    semantic_model: [{
      name: namespace,
      description: `Starter model derived from the catalog of VDB ${vdb.name} version ${vdb.version}`,
      datasets,
      ...(relationships.length > 0 ? { relationships } : {}),
    }],
  };
  const documentPath = `${namespace}.osi.yaml`;
  const documentText = yamlText(osi,
    `Derived from the catalog of VDB ${vdb.name} version ${vdb.version}: one dataset per relation, one field\n`
    + 'per column, relationships from foreign keys. A starting point: add metrics, descriptions and\n'
    + 'synonyms (ai_context), then update the sha256 values in manifest.yaml and the VDB file.');
  const manifest = {
    name: options.name,
    version: options.version,
    namespace,
    description: `Semantic model of VDB ${vdb.name} version ${vdb.version}`,
    documents: [{ path: documentPath, mediaType: OSI_YAML_MEDIA_TYPE, sha256: sha256Hex(documentText) }],
  };
  const manifestText = yamlText(manifest);
  return { files: [{ path: 'manifest.yaml', text: manifestText }, { path: documentPath, text: documentText }], manifestSha256: sha256Hex(manifestText) };
}

/**
 * How each column is written in an expression: bare when the datasource's grammar reads the bare name as
 * that very column (not a keyword, no folding), quoted by the dialect otherwise.
 */
async function columnExpressions(relations: readonly VdbRelation[], dialectOf: (datasource: string) => ExpressionDialect): Promise<Map<CatalogColumn, string>> {
  const analyzer = new ExpressionAnalyzer();
  const result = new Map<CatalogColumn, string>();
  for (const relation of relations) {
    const dialect = dialectOf(relation.datasource);
    await analyzer.prepare(dialect, relation.columns.map((column) => column.name));
    for (const column of relation.columns) {
      const outcome = analyzer.analyze(dialect, column.name);
      const bare = outcome.ok && outcome.analysis.plainColumn && outcome.analysis.references[0]?.parts[0] === column.name;
      result.set(column, bare ? column.name : dialect.quoteIdentifier(column.name));
    }
  }
  return result;
}

/** Short collections are written inline, as a person would: `primary_key: [id]`. */
const INLINE_KEYS: ReadonlySet<string> = new Set(['primary_key', 'unique_keys', 'expression', 'dimension', 'from_columns', 'to_columns']);

function yamlText(value: unknown, comment?: string): string {
  const document = new Document(value);
  visit(document, {
    Pair(_key, pair) {
      if (isPair(pair) && isScalar(pair.key) && INLINE_KEYS.has(String(pair.key.value)) && isCollection(pair.value)) pair.value.flow = true;
    },
  });
  if (comment) document.commentBefore = comment.split('\n').map((line) => ` ${line}`).join('\n');
  return document.toString({ lineWidth: 0 });
}
