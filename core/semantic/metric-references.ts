/**
 * What the names in metric expressions mean. A bare name is a metric; `dataset.field` is a field (and
 * `namespace.metric` a metric of another namespace); `namespace.dataset.field` is fully qualified. Metric
 * expressions are parsed in the grammar of the VDB's default datasource: a metric cannot span datasources.
 */
import type { DiagnosticList } from './diagnostic-list.js';
import { chosenExpression, expressionSql } from './expression-dialects.js';
import type { ExpressionAnalyzer } from './expression-analysis.js';
import type { DocumentPath } from './located-document.js';
import { siteAt } from './module-acquisition.js';
import type { MetricElement, MetricReference, SemanticModel } from './model-elements.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import type { Lookup, ModelNames } from './model-resolution.js';
import { candidateHint } from './name-matching.js';
import { OSI_AGGREGATES, scanExpression, unavailableFunction } from './osi-expression-subset.js';

export async function resolveMetricReferences(
  model: SemanticModel,
  names: ModelNames,
  dialect: ExpressionDialect,
  analyzer: ExpressionAnalyzer,
  diagnostics: DiagnosticList,
): Promise<void> {
  const pending: MetricElement[] = [];
  for (const metric of model.metrics) {
    const chosen = chosenExpression(metric.osi.expression, metric.modelDialect, metric.path);
    if (!chosen) {
      diagnostics.add('compile.dialect_unavailable', siteAt(metric.scope.document, [...metric.path, 'expression']), `metric:${metric.id}`,
        `metric ${metric.id} has no expression in OSI_SQL_2026 or ANSI_SQL`);
      continue;
    }
    metric.expression = chosen.text;
    metric.expressionPath = chosen.path;
    metric.expressionDialect = chosen.dialect;
    pending.push(metric);
  }
  await analyzer.prepare(dialect, pending.map((metric) => metric.expression as string));
  for (const metric of pending) resolveMetric(metric, names, dialect, analyzer, diagnostics);
}

function resolveMetric(metric: MetricElement, names: ModelNames, dialect: ExpressionDialect, analyzer: ExpressionAnalyzer, diagnostics: DiagnosticList): void {
  const at = () => siteAt(metric.scope.document, metric.expressionPath as DocumentPath);
  const target = `metric:${metric.id}`;
  const osi = metric.expressionDialect === 'osi';
  const scanned = scanExpression(metric.expression as string, (name) => analyzer.isAggregate(name) || OSI_AGGREGATES.has(name), osi);
  if (osi && scanned.outsideSubset !== undefined) {
    diagnostics.add('compile.expression_outside_subset', at, target, `metric ${metric.id}, ${metric.expression}: OSI_SQL_2026 does not have ${scanned.outsideSubset}`);
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
  const written = expressionSql({ text: metric.expression as string, dialect: metric.expressionDialect ?? 'ansi' }, dialect, `metric ${metric.id}`);
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
    const resolved = resolveReference(metric, reference.parts, names);
    if (resolved.ok) {
      references.push(resolved.value);
    } else {
      diagnostics.add(resolved.code, at, target, `metric ${metric.id} uses ${reference.parts.join('.')}: ${resolved.message}`);
    }
  }
  if (references.length === outcome.analysis.references.length) metric.references = references;
}

type Resolved = { ok: true; value: MetricReference } | { ok: false; code: Extract<Lookup<unknown>, { ok: false }>['code'] | 'resolve.unknown_field'; message: string };

function resolveReference(metric: MetricElement, parts: string[], names: ModelNames): Resolved {
  const scope = metric.scope;
  if (parts.length === 1) {
    const found = names.lookup(scope, 'metric', parts);
    return found.ok ? { ok: true, value: { kind: 'metric', metric: found.value } } : { ...found, message: `${found.message}; fields are written dataset.field` };
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
  const exact = dataset.value.fields.find((field) => field.name === fieldName);
  const folded = dataset.value.fields.filter((field) => field.name.toLowerCase() === fieldName.toLowerCase());
  const field = exact ?? (folded.length === 1 ? folded[0] : undefined);
  if (!field) {
    return { ok: false, code: 'resolve.unknown_field', message: `dataset ${dataset.value.id} has no field ${fieldName}${candidateHint(fieldName, dataset.value.fields.map((candidate) => candidate.name))}` };
  }
  return { ok: true, value: { kind: 'field', field } };
}
