/**
 * What the names in metric expressions mean. A bare name is a metric; `dataset.field` is a field (and
 * `namespace.metric` a metric of another namespace); `namespace.dataset.field` is fully qualified. Where a
 * dataset has no field of the name, the name is a column of its relation, from the introspected catalog
 * (`SUM(orders.subtotal)`), and a bare name that is no metric is a column of the model's one dataset that
 * has it (`SUM(o_totalprice)`, as converters write a fact's columns): the column becomes a private field
 * of its dataset, so it is compiled, and checked against a caller's grants, as any field. Metric
 * expressions are parsed in the grammar of the VDB's default datasource: a metric cannot span datasources.
 */
import type { CatalogColumn } from '../plugin-api/catalog.js';
import type { DiagnosticList } from './diagnostic-list.js';
import { chosenExpression, dialectsOf, expressionSql, outsideSubset } from './expression-dialects.js';
import type { ExpressionAnalyzer } from './expression-analysis.js';
import type { DocumentPath } from './located-document.js';
import { siteAt } from './module-acquisition.js';
import type { DatasetElement, FieldElement, MetricElement, MetricReference, SemanticModel } from './model-elements.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import type { Lookup, ModelNames } from './model-resolution.js';
import { candidateHint, NameTable } from './name-matching.js';
import { OSI_AGGREGATES, scanExpression, unavailableFunction } from './osi-expression-subset.js';

export async function resolveMetricReferences(
  model: SemanticModel,
  names: ModelNames,
  dialectOf: (datasource: string) => ExpressionDialect,
  datasource: string,
  analyzer: ExpressionAnalyzer,
  diagnostics: DiagnosticList,
): Promise<void> {
  const dialect = dialectOf(datasource);
  const pending: MetricElement[] = [];
  for (const metric of model.metrics) {
    const chosen = chosenExpression(metric.osi.expression, metric.modelDialect, metric.path);
    if (!chosen) {
      diagnostics.add('compile.dialect_unavailable', siteAt(metric.scope.document, [...metric.path, 'expression']), `metric:${metric.id}`,
        `metric ${metric.id} has no expression in SQL (OSI_SQL_2026, ANSI_SQL or a vendor's SQL dialect), only in ${dialectsOf(metric.osi.expression)}`);
      continue;
    }
    metric.expression = chosen.text;
    metric.expressionPath = chosen.path;
    metric.expressionDialect = chosen.dialect;
    metric.expressionLabel = chosen.label;
    pending.push(metric);
  }
  await analyzer.prepare(dialect, pending.map((metric) => metric.expression as string));
  const columns = new ColumnFields(model, dialectOf);
  for (const metric of pending) resolveMetric(metric, names, columns, dialect, analyzer, diagnostics);
}

/** The field of the name, compared exactly, else without case when only one matches so. */
function fieldNamed(dataset: DatasetElement, name: string): FieldElement | undefined {
  const exact = dataset.fields.find((field) => field.name === name);
  const folded = dataset.fields.filter((field) => field.name.toLowerCase() === name.toLowerCase());
  return exact ?? (folded.length === 1 ? folded[0] : undefined);
}

/** The private fields that stand for columns metrics read, one per column, made when a metric first reads it. */
class ColumnFields {
  private readonly tables = new WeakMap<DatasetElement, NameTable<CatalogColumn>>();

  constructor(readonly model: SemanticModel, private readonly dialectOf: (datasource: string) => ExpressionDialect) {}

  column(dataset: DatasetElement, name: string): CatalogColumn | undefined {
    if (!dataset.relation) return undefined;
    let table = this.tables.get(dataset);
    if (!table) {
      table = new NameTable();
      for (const column of dataset.relation.columns) table.add(column.name, column);
      this.tables.set(dataset, table);
    }
    return table.find(name);
  }

  /** Whether `dataset` has a field or a column named `name`. */
  has(dataset: DatasetElement, name: string): boolean {
    return fieldNamed(dataset, name) !== undefined || this.column(dataset, name) !== undefined;
  }

  /** The field of `dataset` named `name`, else the private field of its column `name`, else undefined. */
  fieldOrColumn(dataset: DatasetElement, name: string): FieldElement | undefined {
    const field = fieldNamed(dataset, name);
    if (field) return field;
    const column = this.column(dataset, name);
    return column ? this.fieldOf(dataset, column) : undefined;
  }

  private fieldOf(dataset: DatasetElement, column: CatalogColumn): FieldElement {
    const known = dataset.fields.find((field) => field.implicit && field.name === column.name);
    if (known) return known;
    const text = this.dialectOf(dataset.relation?.datasource as string).quoteIdentifier(column.name);
    const field: FieldElement = {
      id: `${dataset.id}.${column.name}`,
      name: column.name,
      dataset,
      path: dataset.path,
      osi: { name: column.name, expression: column.name, access_modifier: 'private' },
      implicit: true,
      expression: column.name,
      expressionDialect: 'ansi',
      dialectSql: text,
      analysis: { references: [{ parts: [column.name], start: 0, end: text.length }], hasAggregate: false, plainColumn: true },
      targets: [{ kind: 'column', dataset, column }],
      columns: [column],
      logicalType: column.logicalType,
    };
    dataset.fields.push(field);
    return field;
  }
}

function resolveMetric(metric: MetricElement, names: ModelNames, columns: ColumnFields, dialect: ExpressionDialect, analyzer: ExpressionAnalyzer, diagnostics: DiagnosticList): void {
  const at = () => siteAt(metric.scope.document, metric.expressionPath as DocumentPath);
  const target = `metric:${metric.id}`;
  const osi = metric.expressionDialect !== 'ansi';
  const scanned = scanExpression(metric.expression as string, (name) => analyzer.isAggregate(name) || OSI_AGGREGATES.has(name), osi);
  if (osi && scanned.outsideSubset !== undefined) {
    diagnostics.add('compile.expression_outside_subset', at, target, `metric ${metric.id}, ${metric.expression}: ${outsideSubset(metric.expressionLabel, scanned.outsideSubset)}`);
    return;
  }
  if (scanned.deferredFrame !== undefined) {
    diagnostics.add('compile.deferred_frame_mode', at, target, `metric ${metric.id}, ${metric.expression}: ${scanned.deferredFrame}; the OSI Foundation defers it (§6.10.6)`);
    return;
  }
  if (scanned.nestedWindow !== undefined) {
    diagnostics.add('compile.nested_window', at, target, `metric ${metric.id}, ${metric.expression}: the window function ${scanned.nestedWindow} is inside another window function`);
    return;
  }
  const written = expressionSql({ text: metric.expression as string, dialect: metric.expressionDialect ?? 'ansi', label: metric.expressionLabel }, dialect, `metric ${metric.id}`);
  if (!written.ok) {
    diagnostics.add(written.code, at, target, `${written.message} (the VDB's datasource, ${dialect.grammar.label})`);
    return;
  }
  const missing = osi && !written.translated ? unavailableFunction(scanned, dialect.functionPolicy.allowed) : undefined;
  if (missing !== undefined) {
    diagnostics.add('compile.function_unavailable', at, target, `metric ${metric.id}, ${metric.expression}: the VDB's datasource (${dialect.grammar.label}) has no function ${missing}`);
    return;
  }
  metric.dialectSql = written.sql;
  const outcome = analyzer.analyze(dialect, written.sql);
  if (!outcome.ok) {
    diagnostics.add('compile.expression_invalid', at, target, `metric ${metric.id}, ${metric.expression}: ${outcome.message}`);
    return;
  }
  if (scanned.nested) {
    diagnostics.add('compile.nested_aggregate', at, target, `metric ${metric.id}, ${metric.expression}: ${scanned.nested.name} is applied inside another aggregate; the OSI Foundation defers nested aggregation`);
    return;
  }
  // Their spans are compared with the analysis's, which are spans of the SQL written.
  metric.aggregateCalls = written.translated ? scanExpression(written.sql, (name) => analyzer.isAggregate(name), false).aggregates : scanned.aggregates;
  metric.windowed = scanned.windowed;
  metric.analysis = outcome.analysis;
  const references: MetricReference[] = [];
  for (const reference of outcome.analysis.references) {
    const resolved = resolveReference(metric, reference.parts, names, columns);
    if (resolved.ok) {
      references.push(resolved.value);
    } else if (!resolved.unbound) {
      diagnostics.add(resolved.code, at, target, `metric ${metric.id} uses ${reference.parts.join('.')}: ${resolved.message}`);
    }
  }
  if (references.length === outcome.analysis.references.length) metric.references = references;
}

type Resolved = { ok: true; value: MetricReference } | { ok: false; code: Extract<Lookup<unknown>, { ok: false }>['code'] | 'resolve.unknown_field'; message: string; unbound?: true };

function resolveReference(metric: MetricElement, parts: string[], names: ModelNames, columns: ColumnFields): Resolved {
  const scope = metric.scope;
  if (parts.length === 1) {
    const found = names.lookup(scope, 'metric', parts);
    if (found.ok) return { ok: true, value: { kind: 'metric', metric: found.value } };
    if (found.code !== 'resolve.unknown_metric') return found;
    const owner = bareColumnOwner(metric, parts[0] as string, columns);
    if (owner.ok) return { ok: true, value: { kind: 'field', field: owner.field } };
    return owner.ambiguous
      ? { ok: false, code: 'resolve.ambiguous_reference', message: `"${parts[0]}" is a column of datasets ${owner.ambiguous.join(' and ')}; qualify it as dataset.${parts[0]}` }
      : { ...found, message: `${found.message}; fields are written dataset.field` };
  }
  const datasetParts = parts.slice(0, -1);
  const fieldName = parts.at(-1) as string;
  const dataset = names.lookup(scope, 'dataset', datasetParts);
  if (!dataset.ok) {
    if (parts.length === 2 && (parts[0] === scope.namespace || scope.imports.includes(parts[0] as string))) {
      const qualifiedMetric = names.lookup(scope, 'metric', parts);
      if (qualifiedMetric.ok) return { ok: true, value: { kind: 'metric', metric: qualifiedMetric.value } };
    }
    return dataset;
  }
  const field = columns.fieldOrColumn(dataset.value, fieldName);
  // Without its relation (its source failed, and said so) a dataset's columns are unknown: nothing more to say.
  if (!field && !dataset.value.relation) return { ok: false, code: 'resolve.unknown_field', message: '', unbound: true };
  if (!field) {
    const relation = dataset.value.relation;
    return { ok: false, code: 'resolve.unknown_field', message: `dataset ${dataset.value.id} has no field ${fieldName}${relation ? `, and relation ${relation.schema}.${relation.name} no such column` : ''}${candidateHint(fieldName, dataset.value.fields.map((candidate) => candidate.name))}` };
  }
  return { ok: true, value: { kind: 'field', field } };
}

/**
 * The field a bare name that is no metric stands for: a field or column of the one dataset of the metric's
 * `semantic_model` entry that has it. Where several have it, the one that is the `to` of no relationship
 * (the fact, whose columns converters write bare) is meant, when there is exactly one such.
 */
function bareColumnOwner(metric: MetricElement, name: string, columns: ColumnFields): { ok: true; field: FieldElement } | { ok: false; ambiguous?: string[] } {
  const datasets = columns.model.datasets.filter((dataset) => dataset.model === metric.model && dataset.scope === metric.scope);
  const found = datasets.filter((dataset) => columns.has(dataset, name));
  const targets = new Set(columns.model.relationships.map((relationship) => relationship.to));
  const facts = found.filter((dataset) => !targets.has(dataset));
  const owner = found.length === 1 ? found[0] : facts.length === 1 ? facts[0] : undefined;
  if (owner) return { ok: true, field: columns.fieldOrColumn(owner, name) as FieldElement };
  return found.length === 0 ? { ok: false } : { ok: false, ambiguous: found.map((dataset) => dataset.id) };
}
