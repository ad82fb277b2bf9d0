import type { LogicalType } from './catalog.js';
import type { JsonValue } from './sql-dialect.js';

/**
 * The compiled semantic package of one VDB (`format: semantic-package`, `formatVersion: 1`), documented in
 * docs/semantic.md. Every id is namespaced: a dataset `retail.orders`, a field `retail.orders.total`, a
 * metric `retail.revenue`. Every `sql` is in the dialect of the dataset's datasource and names datasets by
 * their `alias`, so a consumer writes `FROM <relation> AS <alias>` and splices it in.
 */
export interface SemanticPackage {
  format: 'semantic-package';
  formatVersion: 1;
  vdb: { name: string; version: string; catalogRevision: string };
  module: { name: string; version: string; namespace: string };
  /**
   * The documents, each with the digest of its content as canonical JSON: formatting-proof. The manifest's
   * content is `module` and this list (its file digests pin bytes, not meaning, so they are left out).
   */
  sources: PackageSource[];
  models: PackageModel[];
  datasets: PackageDataset[];
  relationships: PackageRelationship[];
  metrics: PackageMetric[];
}

/** A document the package was built from, with its digest. */
export interface PackageSource {
  path: string;
  mediaType: string;
  /** `sha256:<hex>` of the parsed content as RFC 8785 JSON: key order, comments and layout do not count. */
  contentDigest: string;
}

/** One `semantic_model` entry of a document. */
export interface PackageModel {
  name: string;
  namespace: string;
  document: string;
  description: string | null;
  aiContext: JsonValue | null;
}

/** A dataset of a semantic package: a relation of the VDB with its fields. */
export interface PackageDataset {
  id: string;
  name: string;
  namespace: string;
  model: string;
  /** The SQL alias the package's `sql` texts use for this dataset; unique in the package. */
  alias: string;
  description: string | null;
  aiContext: JsonValue | null;
  relation: { datasource: string; schema: string; name: string; kind: 'table' | 'view' };
  primaryKey: string[];
  /** Declared `unique_keys`, else the relation's unique constraints: with `primaryKey`, what cardinality is inferred from. */
  uniqueKeys: string[][];
  /**
   * The role the model declares, e.g. `bridge` for a dataset that links two others many-to-many (the
   * Foundation's bridge, §6.8.1, checked to have many-to-one relationships to two or more datasets);
   * null when it declares none (a bridge is still recognisable from the relationships).
   */
  role: string | null;
  fields: PackageField[];
}

/** `public` (the default) may be named in a query; `private` only inside the model's own expressions. */
export type AccessModifier = 'public' | 'private';

/**
 * Inferred from declared keys as the Foundation does (§6.4): the `from` side is "one" when its columns are a
 * primary or unique key of its dataset, the `to` side likewise; otherwise "many".
 */
export type RelationshipCardinality = 'manyToOne' | 'oneToOne' | 'oneToMany' | 'manyToMany';

/** A field of a dataset: a column or an expression over its columns. */
export interface PackageField {
  id: string;
  name: string;
  /** The expression as written, in the dialect compiled: OSI_SQL_2026 if the field has it, else ANSI_SQL. */
  expression: string;
  /**
   * The expression with every column qualified by its dataset's alias, e.g. `"orders"."total"`, and every
   * field it names inlined in parentheses. An enriched field's `sql` also names the datasets of `joins`.
   */
  sql: string;
  /** The column of its own dataset when the expression is exactly one, else null. */
  column: string | null;
  /** Every column of its own dataset the expression reads, through the fields it names too. */
  columns: string[];
  /**
   * Present only on an enriched field (Foundation §4.3.1: it reads a field or column of a dataset reached
   * from its own along many-to-one relationships): the joins, from its own dataset and in order, that bring
   * the datasets its `sql` reads. Each is many-to-one (`fanOut` false), so a row of its dataset stays one row.
   */
  joins?: PackageJoin[];
  /** Present with `joins`: the columns `sql` reads in each of those other datasets (one only passed through is not listed). */
  reads?: { dataset: string; columns: string[] }[];
  /**
   * Present only on a field whose datasets live in several datasources: those datasources. A query using it
   * is federated (docs/federation.md) and compiled in PostgreSQL's dialect, not with this `sql`.
   */
  datasources?: string[];
  /** The column's logical type, or the declared `logical_type` of a computed field; null when unknown. */
  logicalType: LogicalType | null;
  nativeType: string | null;
  nullable: boolean | null;
  isTime: boolean;
  label: string | null;
  description: string | null;
  aiContext: JsonValue | null;
  accessModifier: AccessModifier;
}

/** A relationship between two datasets of a semantic package, by their keys. */
export interface PackageRelationship {
  id: string;
  name: string;
  namespace: string;
  /** The dataset of the foreign key (the many side, unless `cardinality` says otherwise). */
  from: string;
  /** The dataset the key points to (the one side, unless `cardinality` says otherwise). */
  to: string;
  fromColumns: string[];
  toColumns: string[];
  cardinality: RelationshipCardinality;
  aiContext: JsonValue | null;
}

/** One join of a metric's path: `JOIN <dataset relation> AS <alias> ON <on>`. */
export interface PackageJoin {
  relationship: string;
  /** The dataset this step joins; the other side is already in the query. */
  dataset: string;
  on: string;
  /** True when the step goes from the one side to the many side: rows of the query may repeat. */
  fanOut: boolean;
}

/** A metric of a semantic package: an aggregate expression over its datasets. */
export interface PackageMetric {
  id: string;
  name: string;
  namespace: string;
  model: string;
  /** The expression as written, in the dialect compiled: OSI_SQL_2026 if the metric has it, else ANSI_SQL. */
  expression: string;
  /** The expression with fields replaced by their `sql` and other metrics inlined in parentheses. */
  sql: string;
  /** Ids of the fields the expression (with inlined metrics) reads. */
  fields: string[];
  /** Ids of the metrics the expression names directly. */
  metrics: string[];
  /** Every dataset the metric reads; the query starts at `baseDataset` and adds `joins` in order. */
  datasets: string[];
  baseDataset: string;
  joins: PackageJoin[];
  /** Present only on a metric whose datasets live in several datasources: those datasources; as a field's. */
  datasources?: string[];
  description: string | null;
  aiContext: JsonValue | null;
  accessModifier: AccessModifier;
}
