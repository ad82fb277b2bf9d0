/**
 * The active model as an Apache Ossie document (version 0.2.0.dev0), for other tools: what the service
 * activated, in Ossie's keys only. Every expression is written as the `ANSI_SQL` variant of the SQL the
 * service compiled it to (an OSI_SQL_2026 or vendor expression as its datasource's SQL), so the document
 * means the same to the service when loaded again; sources are `schema.relation` of the bound relation.
 * Keys only the service reads (`namespace`, `binding`, `logical_type`, `access_modifier`, `role`) are left
 * out; a column type is written as Ossie's `datatype`. The document is checked against Ossie's own JSON
 * Schema (core/semantic/ossie/osi-schema.json, shipped with its licence and source).
 *
 * Without `namespace`, the document's entries are one namespace once loaded again: a dataset, relationship
 * or metric whose name an earlier namespace took is exported as `<namespace>_<name>`, and every reference to
 * it (and every reference qualified by a namespace) is rewritten; a model over several datasources writes
 * sources as `datasource.schema.relation`, so two datasources' relations of one name stay apart.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { CatalogColumn, LogicalType } from '../plugin-api/catalog.js';
import type { JsonValue } from '../plugin-api/sql-dialect.js';
import type { ColumnReference } from '../plugin-api/sql-grammar.js';
import type { DatasetElement, FieldElement, FieldTarget, MetricElement, MetricReference, RelationshipElement, SemanticModel } from './model-elements.js';
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

/** What a reference of an expression names: a metric, or a field or column of a dataset. */
type Named = { metric: MetricElement } | { dataset: DatasetElement; name: string };

/** Writes the document's elements under the names they have in it (see the header). */
class OssieWriter {
  private readonly names = new Map<DatasetElement | RelationshipElement | MetricElement, string>();
  /** More than one datasource: sources name theirs. */
  private readonly datasources: boolean;

  constructor(model: SemanticModel) {
    const taken = new Set<string>();
    for (const scope of model.scopes) {
      const mine = <T extends { scope: unknown }>(elements: readonly T[]) => elements.filter((element) => element.scope === scope);
      for (const element of [...mine(model.datasets), ...mine(model.relationships), ...mine(model.metrics)]) {
        let name = element.name;
        // Names compare without case in one namespace (Foundation §4.6.3).
        for (let index = 1; taken.has(name.toLowerCase()); index++) name = `${element.namespace}_${element.name}${index > 1 ? `_${index}` : ''}`;
        taken.add(name.toLowerCase());
        this.names.set(element, name);
      }
    }
    this.datasources = new Set(model.datasets.flatMap((dataset) => dataset.relation?.datasource ?? [])).size > 1;
  }

  private name(element: DatasetElement | RelationshipElement | MetricElement): string {
    return this.names.get(element) ?? element.name;
  }

  /**
   * An expression's SQL with each reference that is qualified, or names a renamed element, written as the
   * document names it; a bare reference to a field or column of its own dataset stays as written.
   */
  private rewritten(sql: string, references: readonly ColumnReference[] | undefined, named: (index: number) => Named | undefined): string {
    let text = sql;
    const spans = (references ?? []).map((reference, index) => ({ reference, target: named(index) })).sort((a, b) => b.reference.start - a.reference.start);
    for (const { reference, target } of spans) {
      if (!target) continue;
      const parts = 'metric' in target ? [this.name(target.metric)] : [this.name(target.dataset), target.name];
      const bare = !('metric' in target) && reference.parts.length === 1;
      if (bare || parts.join('.').toLowerCase() === reference.parts.join('.').toLowerCase()) continue;
      text = `${text.slice(0, reference.start)}${parts.map(sourcePart).join('.')}${text.slice(reference.end)}`;
    }
    return text;
  }

  private field(element: FieldElement): object {
    const { osi } = element;
    const [only] = element.targets ?? [];
    const column = element.analysis?.plainColumn && only?.kind === 'column' ? only.column : undefined;
    const datatype = osi.datatype ?? (column ? datatypeOf(column) : undefined);
    const target = (index: number): Named | undefined => {
      const found: FieldTarget | undefined = element.targets?.[index];
      if (!found) return undefined;
      return found.kind === 'column' ? { dataset: found.dataset, name: found.column.name } : { dataset: found.field.dataset, name: found.field.name };
    };
    const sql = element.dialectSql === undefined ? element.expression ?? osi.name : this.rewritten(element.dialectSql, element.analysis?.references, target);
    return {
      name: element.name,
      expression: ansi(sql),
      ...(osi.dimension === undefined ? {} : { dimension: osi.dimension }),
      ...(osi.label === undefined ? {} : { label: osi.label }),
      ...(datatype === undefined ? {} : { datatype }),
      ...described(osi),
    };
  }

  dataset(element: DatasetElement): object {
    const relation = element.relation;
    const { osi } = element;
    const primaryKey = osi.primary_key ?? (relation && relation.primaryKey.length > 0 ? relation.primaryKey : undefined);
    const parts = relation ? [...(this.datasources ? [relation.datasource] : []), relation.schema, relation.name] : [];
    return {
      name: this.name(element),
      source: relation ? parts.map(sourcePart).join('.') : osi.source,
      ...(primaryKey ? { primary_key: primaryKey } : {}),
      ...(osi.unique_keys ? { unique_keys: osi.unique_keys } : {}),
      ...described(osi),
      fields: element.fields.filter((candidate) => !candidate.implicit).map((candidate) => this.field(candidate)),
    };
  }

  relationship(element: RelationshipElement): object {
    const { osi } = element;
    return {
      name: this.name(element),
      from: element.from ? this.name(element.from) : osi.from,
      to: element.to ? this.name(element.to) : osi.to,
      from_columns: element.fromColumns?.map((column) => column.name) ?? osi.from_columns,
      to_columns: element.toColumns?.map((column) => column.name) ?? osi.to_columns,
      ...described(osi),
    };
  }

  metric(element: MetricElement): object {
    const { osi } = element;
    const target = (index: number): Named | undefined => {
      const found: MetricReference | undefined = element.references?.[index];
      if (!found) return undefined;
      return found.kind === 'metric' ? { metric: found.metric } : { dataset: found.field.dataset, name: found.field.name };
    };
    const sql = element.dialectSql === undefined ? element.expression ?? '' : this.rewritten(element.dialectSql, element.analysis?.references, target);
    return {
      name: this.name(element),
      expression: ansi(sql),
      ...(osi.datatype === undefined ? {} : { datatype: osi.datatype }),
      ...described(osi),
    };
  }
}

/** The Ossie document of an activated model: one `semantic_model` entry per entry of its documents. */
export function ossieDocument(model: SemanticModel): OssieDocument {
  const writer = new OssieWriter(model);
  const entries: OssieDocument['semantic_model'] = [];
  // Entries of one name would be one model once loaded again (a bare COUNT(*) counts the fact of its entry).
  const entryNames = new Set<string>();
  for (const scope of model.scopes) {
    for (const osi of scope.document.value.semantic_model) {
      const mine = <T extends { scope: unknown; model: string }>(elements: readonly T[]) => elements.filter((element) => element.scope === scope && element.model === osi.name);
      let name = osi.name;
      for (let index = 1; entryNames.has(name.toLowerCase()); index++) name = `${scope.namespace}_${osi.name}${index > 1 ? `_${index}` : ''}`;
      entryNames.add(name.toLowerCase());
      const relationships = mine(model.relationships);
      const metrics = mine(model.metrics);
      entries.push({
        name,
        ...described(osi),
        datasets: mine(model.datasets).map((element) => writer.dataset(element)),
        ...(relationships.length > 0 ? { relationships: relationships.map((element) => writer.relationship(element)) } : {}),
        ...(metrics.length > 0 ? { metrics: metrics.map((element) => writer.metric(element)) } : {}),
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
