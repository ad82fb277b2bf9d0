import type { CatalogColumn, LogicalType } from '../plugin-api/catalog.js';
import type { VdbRelation } from '../plugin-api/vdb.js';
import type { ExpressionAnalysis } from '../plugin-api/sql-grammar.js';
import type { RelationshipCardinality } from '../plugin-api/semantic-package.js';
import type { DocumentPath } from './located-document.js';
import type { AcquiredDocument } from './module-acquisition.js';
import type { CompiledDialect } from './expression-dialects.js';
import type { AggregateCall } from './osi-expression-subset.js';
import type { OsiDataset, OsiDialect, OsiField, OsiMetric, OsiRelationship } from './module-schemas.js';


/** What one document sees: its namespace, the namespaces it imports, its default schema. */
export interface DocumentScope {
  document: AcquiredDocument;
  namespace: string;
  /** Imports that name a namespace of the module (unknown ones are diagnosed and left out). */
  imports: string[];
  bindingSchema: string | undefined;
  /** False when `binding.schema` is not a schema of the VDB (diagnosed once, at the binding). */
  bindingValid: boolean;
}

/** One part of a source as written: a quoted part compares exactly, an unquoted one folds case (SQL's rule). */
export interface NamePart {
  name: string;
  quoted: boolean;
}

export interface SourceName {
  database?: NamePart;
  schema?: NamePart;
  relation: NamePart;
}

interface ElementBase {
  /** Namespaced id: `retail.orders`, `retail.revenue`. */
  id: string;
  name: string;
  namespace: string;
  /** The `semantic_model` entry it is defined in. */
  model: string;
  /** That entry's `dialect`: what its expressions are written in when they do not say. */
  modelDialect: OsiDialect | undefined;
  scope: DocumentScope;
  /** Where it is defined in its document. */
  path: DocumentPath;
}

export interface DatasetElement extends ElementBase {
  osi: OsiDataset;
  /** The source split into its parts (`database.schema.relation`, the first two optional), once resolution succeeded. */
  source?: SourceName;
  relation?: VdbRelation;
  fields: FieldElement[];
  /** Assigned at compilation: unique in the package. */
  alias?: string;
  /** Where it has no key of its own: the `to_columns` of the relationships to it, each a key by their word. */
  impliedKeys?: string[][];
}

export interface FieldElement {
  id: string;
  name: string;
  dataset: DatasetElement;
  path: DocumentPath;
  osi: OsiField;
  /** True for a column a metric reads where its dataset has no field of that name: a private field the document does not have. */
  implicit?: true;
  /** Path of the compiled expression in the document. */
  expressionPath?: DocumentPath;
  expression?: string;
  expressionDialect?: CompiledDialect;
  /** The dialect the document names for the compiled variant (`DATABRICKS`), for messages. */
  expressionLabel?: string;
  /** The expression as SQL of its datasource (an OSI_SQL_2026 one written anew): what `analysis` parsed. */
  dialectSql?: string;
  analysis?: ExpressionAnalysis;
  /** What each reference of `analysis` names, in the same order, once all were found. */
  targets?: FieldTarget[];
  /** The columns of its own relation the expression names directly, in the order of `targets`. */
  columns?: CatalogColumn[];
  logicalType: LogicalType | null;
  /** Compiled: the expression with columns qualified by their dataset's alias, fields inlined. */
  sql?: string;
  /** Compiled: the columns `sql` reads, per dataset (its own first), through the fields it names too. */
  reads?: Map<DatasetElement, string[]>;
  /** Compiled: the many-to-one steps joining the other datasets `sql` reads (enrichment, Foundation §4.3.1). */
  enrichment?: JoinStep[];
}

/**
 * What a name in a field's expression reads: a column of its own relation, a column of a dataset reached
 * from its own along many-to-one relationships, or a field (of its own dataset or of such a dataset).
 */
export type FieldTarget =
  | { kind: 'column'; dataset: DatasetElement; column: CatalogColumn }
  | { kind: 'field'; field: FieldElement };

export interface RelationshipElement extends ElementBase {
  osi: OsiRelationship;
  from?: DatasetElement;
  to?: DatasetElement;
  fromColumns?: CatalogColumn[];
  toColumns?: CatalogColumn[];
  cardinality?: RelationshipCardinality;
}

/** One join step: `joined` enters the query through `relationship`, from `from` (already in it). */
export interface JoinStep {
  relationship: RelationshipElement;
  from: DatasetElement;
  joined: DatasetElement;
  /** True when the step goes from a one side to a many side: rows repeat. */
  fanOut: boolean;
}

export type MetricReference = { kind: 'field'; field: FieldElement } | { kind: 'metric'; metric: MetricElement };

export interface MetricElement extends ElementBase {
  osi: OsiMetric;
  expressionPath?: DocumentPath;
  expression?: string;
  expressionDialect?: CompiledDialect;
  /** The dialect the document names for the compiled variant (`DATABRICKS`), for messages. */
  expressionLabel?: string;
  /** The expression as SQL of its datasource (an OSI_SQL_2026 one written anew): what `analysis` parsed. */
  dialectSql?: string;
  analysis?: ExpressionAnalysis;
  /** What each reference of `analysis` names, in the same order, once all resolved. */
  references?: MetricReference[];
  /** The aggregate calls of the expression, to tell a metric named inside an aggregate (nested aggregation). */
  aggregateCalls?: AggregateCall[];
  /** True when the expression holds a window function (§6.10): another metric may not name it (§6.10.5). */
  windowed?: boolean;
}

export interface SemanticModel {
  scopes: DocumentScope[];
  datasets: DatasetElement[];
  relationships: RelationshipElement[];
  metrics: MetricElement[];
}
