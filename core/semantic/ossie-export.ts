/**
 * The active model as an Apache Ossie document (version 0.2.0.dev0), for other tools: what the service
 * activated, in Ossie's keys only. Every expression is written as the `ANSI_SQL` variant of the SQL the
 * service compiled it to (an OSI_SQL_2026 or vendor expression as its datasource's SQL), so the document
 * means the same to the service when loaded again; sources are `schema.relation` of the bound relation.
 * Keys only the service reads (`namespace`, `binding`, `logical_type`, `access_modifier`, `role`) are left
 * out; a column type is written as Ossie's `datatype`. The document is checked against Ossie's own JSON
 * Schema (core/semantic/ossie/osi-schema.json, shipped with its licence and source).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { CatalogColumn, LogicalType } from '../plugin-api/catalog.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';
import type { DatasetElement, FieldElement, MetricElement, RelationshipElement, SemanticModel } from './model-elements.js';
import type { OsiDatatype } from './module-schemas.js';
import { OSSIE_VERSION, type OssieDocument } from './ossie-document.js';

type OssieExpression = { dialects: { dialect: 'ANSI_SQL'; expression: string }[] };
type Extensions = { custom_extensions?: JsonValue };
type Described = { description?: string; ai_context?: JsonValue };

/** Ossie's `datatype` of a column's logical type; json and binary have no portable type. */
const DATATYPE_OF: Readonly<Record<LogicalType, OsiDatatype>> = {
  string: 'String', uuid: 'String', integer: 'Integer', bigint: 'Integer', decimal: 'Decimal', float: 'Float',
  boolean: 'Boolean', date: 'Date', time: 'Time', timestamp: 'DateTime', json: 'Opaque', binary: 'Opaque',
};

/** The `datatype` of a column: a timestamp with a time zone is `DateTimeTz`. */
export function datatypeOf(column: Pick<CatalogColumn, 'logicalType' | 'nativeType'>): OsiDatatype {
  if (column.logicalType === 'timestamp' && /with time zone|timestamptz|offset/i.test(column.nativeType)) return 'DateTimeTz';
  return DATATYPE_OF[column.logicalType];
}

/** A name as a source part: as is when SQL reads it back unchanged, else double-quoted. */
export function sourcePart(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function ansi(expression: string): OssieExpression {
  return { dialects: [{ dialect: 'ANSI_SQL', expression }] };
}

/** `description`, `ai_context` and `custom_extensions` as written, where Ossie's schema admits them. */
function described(osi: { description?: string; ai_context?: JsonValue; custom_extensions?: JsonValue }): Described & Extensions {
  const context = osi.ai_context;
  return {
    ...(osi.description === undefined ? {} : { description: osi.description }),
    ...(typeof context === 'string' || (context !== null && typeof context === 'object' && !Array.isArray(context)) ? { ai_context: context } : {}),
    ...(osi.custom_extensions === undefined ? {} : { custom_extensions: osi.custom_extensions }),
  };
}

function field(element: FieldElement): object {
  const { osi } = element;
  const [only] = element.targets ?? [];
  const column = element.analysis?.plainColumn && only?.kind === 'column' ? only.column : undefined;
  const datatype = osi.datatype ?? (column ? datatypeOf(column) : undefined);
  return {
    name: element.name,
    expression: ansi(element.dialectSql ?? element.expression ?? osi.name),
    ...(osi.dimension === undefined ? {} : { dimension: osi.dimension }),
    ...(osi.label === undefined ? {} : { label: osi.label }),
    ...(datatype === undefined ? {} : { datatype }),
    ...described(osi),
  };
}

function dataset(element: DatasetElement): object {
  const relation = element.relation;
  const { osi } = element;
  const primaryKey = osi.primary_key ?? (relation && relation.primaryKey.length > 0 ? relation.primaryKey : undefined);
  return {
    name: element.name,
    source: relation ? `${sourcePart(relation.schema)}.${sourcePart(relation.name)}` : osi.source,
    ...(primaryKey ? { primary_key: primaryKey } : {}),
    ...(osi.unique_keys ? { unique_keys: osi.unique_keys } : {}),
    ...described(osi),
    fields: element.fields.filter((candidate) => !candidate.implicit).map(field),
  };
}

function relationship(element: RelationshipElement): object {
  const { osi } = element;
  return {
    name: element.name,
    from: element.from?.name ?? osi.from,
    to: element.to?.name ?? osi.to,
    from_columns: element.fromColumns?.map((column) => column.name) ?? osi.from_columns,
    to_columns: element.toColumns?.map((column) => column.name) ?? osi.to_columns,
    ...described(osi),
  };
}

function metric(element: MetricElement): object {
  const { osi } = element;
  return {
    name: element.name,
    expression: ansi(element.dialectSql ?? element.expression ?? ''),
    ...(osi.datatype === undefined ? {} : { datatype: osi.datatype }),
    ...described(osi),
  };
}

/** The Ossie document of an activated model: one `semantic_model` entry per entry of its documents. */
export function ossieDocument(model: SemanticModel): OssieDocument {
  const entries: OssieDocument['semantic_model'] = [];
  for (const scope of model.scopes) {
    for (const osi of scope.document.value.semantic_model) {
      const mine = <T extends { scope: unknown; model: string }>(elements: readonly T[]) => elements.filter((element) => element.scope === scope && element.model === osi.name);
      const relationships = mine(model.relationships);
      const metrics = mine(model.metrics);
      entries.push({
        name: osi.name,
        ...described(osi),
        datasets: mine(model.datasets).map(dataset),
        ...(relationships.length > 0 ? { relationships: relationships.map(relationship) } : {}),
        ...(metrics.length > 0 ? { metrics: metrics.map(metric) } : {}),
      });
    }
  }
  return { version: OSSIE_VERSION, semantic_model: entries };
}

let validator: ValidateFunction | undefined;

/** Problems of a document against Ossie's JSON Schema of 0.2.0.dev0; empty when it validates. */
export function ossieSchemaProblems(document: unknown): string[] {
  if (!validator) {
    const schema = JSON.parse(readFileSync(new URL('./ossie/osi-schema.json', import.meta.url), 'utf8')) as object;
    validator = new Ajv2020({ allErrors: true, strict: false }).compile(schema);
  }
  if (validator(document)) return [];
  return (validator.errors ?? []).map((error) => `${error.instancePath || '(document)'}: ${error.message ?? 'is invalid'}`);
}
