/**
 * Compilation: qualify every column with its dataset's alias, inline the metrics a metric names, check
 * that metrics aggregate, and plan the joins each metric needs. Runs only on a model that resolved and
 * bound without errors; an element whose own expression failed is skipped by those that use it.
 */
import type { DiagnosticList } from './diagnostic-list.js';
import type { ColumnReference, ExpressionAnalysis } from '../plugin-api/sql-grammar.js';
import { JoinGraph, type JoinStep } from './join-paths.js';
import type { DocumentPath } from './located-document.js';
import { siteAt } from './module-acquisition.js';
import type { DatasetElement, FieldElement, MetricElement, MetricReference, SemanticModel } from './model-elements.js';
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';

export interface CompiledMetric {
  metric: MetricElement;
  sql: string;
  fields: FieldElement[];
  datasets: DatasetElement[];
  base: DatasetElement;
  steps: JoinStep[];
  hasAggregate: boolean;
}

interface Inlined {
  sql: string;
  fields: FieldElement[];
  hasAggregate: boolean;
}

/** Replaces each span of `text` by its replacement; spans do not overlap. */
export function replaceSpans(text: string, replacements: { start: number; end: number; text: string }[]): string {
  let result = '';
  let position = 0;
  for (const replacement of [...replacements].sort((a, b) => a.start - b.start)) {
    result += text.slice(position, replacement.start) + replacement.text;
    position = replacement.end;
  }
  return result + text.slice(position);
}

export function compileModel(model: SemanticModel, dialectOf: (datasource: string) => ExpressionDialect, diagnostics: DiagnosticList): CompiledMetric[] {
  assignAliases(model.datasets);
  const joins = new JoinGraph(model.relationships);
  const fields = new FieldCompiler(joins, dialectOf, diagnostics);
  for (const dataset of model.datasets) for (const field of dataset.fields) fields.compile(field);
  return new MetricCompiler(model, joins, diagnostics).compileAll();
}

/** A dataset's alias is its name, prefixed with its namespace only where two namespaces share the name. */
function assignAliases(datasets: DatasetElement[]): void {
  const count = new Map<string, number>();
  for (const dataset of datasets) count.set(dataset.name, (count.get(dataset.name) ?? 0) + 1);
  const used = new Set<string>();
  for (const dataset of datasets) {
    let alias = (count.get(dataset.name) ?? 0) > 1 ? `${dataset.namespace}_${dataset.name}` : dataset.name;
    for (let suffix = 2; used.has(alias); suffix++) alias = `${dataset.namespace}_${dataset.name}_${suffix}`;
    used.add(alias);
    dataset.alias = alias;
  }
}

/**
 * Field compilation: every column qualified by its dataset's alias, every field it names inlined (in
 * parentheses), and the many-to-one joins to the datasets it enriches its rows from (Foundation §4.3.1).
 */
class FieldCompiler {
  private readonly done = new Set<FieldElement>();
  private readonly visiting: FieldElement[] = [];

  constructor(
    private readonly joins: JoinGraph,
    private readonly dialectOf: (datasource: string) => ExpressionDialect,
    private readonly diagnostics: DiagnosticList,
  ) {}

  /** Compiles the field (and first the fields it names); false when it or one of them failed. */
  compile(field: FieldElement): boolean {
    if (this.done.has(field)) return field.sql !== undefined;
    const { analysis, targets, dialectSql: expression } = field;
    const cycleStart = this.visiting.indexOf(field);
    if (cycleStart >= 0) {
      const first = this.visiting[cycleStart] as FieldElement;
      const cycle = [...this.visiting.slice(cycleStart), field].map((member) => member.id);
      this.diagnostics.add('compile.field_cycle', siteAt(first.dataset.scope.document, first.expressionPath as DocumentPath), `field:${first.id}`,
        `fields reference each other in a cycle: ${cycle.join(' -> ')}`);
      for (const member of this.visiting.slice(cycleStart)) this.done.add(member);
      return false;
    }
    if (!analysis || !targets || expression === undefined) {
      this.done.add(field);
      return false;
    }
    this.visiting.push(field);
    const named = targets.every((target) => target.kind === 'column' || this.compile(target.field));
    this.visiting.pop();
    if (!named || this.done.has(field)) {
      this.done.add(field);
      return false;
    }
    this.done.add(field);
    const home = field.dataset;
    const dialect = this.dialectOf(home.relation?.datasource as string);
    const reads = new Map<DatasetElement, string[]>([[home, []]]);
    const read = (dataset: DatasetElement, columns: Iterable<string>) => {
      const list = reads.get(dataset) ?? [];
      for (const column of columns) if (!list.includes(column)) list.push(column);
      reads.set(dataset, list);
    };
    const sql = replaceSpans(expression, targets.map((target, index) => {
      const { start, end } = analysis.references[index] as ColumnReference;
      if (target.kind === 'column') {
        read(target.dataset, [target.column.name]);
        return { start, end, text: `${dialect.quoteIdentifier(target.dataset.alias as string)}.${dialect.quoteIdentifier(target.column.name)}` };
      }
      for (const [dataset, columns] of target.field.reads ?? []) read(dataset, columns);
      return { start, end, text: target.field.analysis?.plainColumn && target.field.targets?.[0]?.kind === 'column' ? target.field.sql as string : `(${target.field.sql})` };
    }));
    const others = [...reads.keys()].filter((dataset) => dataset !== home);
    const elsewhere = others.find((dataset) => dataset.relation?.datasource !== home.relation?.datasource);
    if (elsewhere) {
      // Compiled all the same: a query using it reads both datasources, so it is federated and compiled again
      // in the federation's dialect, where this text is written in PostgreSQL's (docs/federation.md).
      this.diagnostics.add('compile.cross_datasource_field', siteAt(home.scope.document, field.expressionPath as DocumentPath), `field:${field.id}`,
        `field ${field.id} reads dataset ${elsewhere.id} of datasource ${elsewhere.relation?.datasource}; ${home.id} is in ${home.relation?.datasource}: a query using it is federated`);
    }
    const plan = this.joins.enrichment(home, others);
    if (!plan.ok) {
      this.diagnostics.add('compile.field_path_ambiguous', siteAt(home.scope.document, field.expressionPath as DocumentPath), `field:${field.id}`,
        `field ${field.id} reads dataset ${plan.ambiguous.id}, which ${home.id} reaches along more than one chain of many-to-one relationships: the value it enriches each row with is ambiguous`);
      return false;
    }
    field.sql = sql;
    field.reads = reads;
    field.enrichment = plan.steps;
    const [only] = targets;
    if (field.logicalType === null && analysis.plainColumn && only?.kind === 'field') field.logicalType = only.field.logicalType;
    return true;
  }
}

class MetricCompiler {
  private readonly inlined = new Map<MetricElement, Inlined | null>();
  private readonly visiting: MetricElement[] = [];
  constructor(
    private readonly model: SemanticModel,
    private readonly joins: JoinGraph,
    private readonly diagnostics: DiagnosticList,
  ) {}

  compileAll(): CompiledMetric[] {
    const compiled: CompiledMetric[] = [];
    for (const metric of this.model.metrics) {
      const result = this.finish(metric);
      if (result) compiled.push(result);
    }
    return compiled;
  }

  private at(metric: MetricElement) {
    return siteAt(metric.scope.document, (metric.expressionPath ?? [...metric.path, 'expression']) as DocumentPath);
  }

  /** The metric's expression with its references replaced; null when it or a metric it names failed. */
  private inline(metric: MetricElement): Inlined | null {
    const known = this.inlined.get(metric);
    if (known !== undefined) return known;
    const cycleStart = this.visiting.indexOf(metric);
    if (cycleStart >= 0) {
      const cycle = [...this.visiting.slice(cycleStart), metric].map((member) => member.id);
      const first = this.visiting[cycleStart] as MetricElement;
      this.diagnostics.add('compile.metric_cycle', this.at(first), `metric:${first.id}`, `metrics reference each other in a cycle: ${cycle.join(' -> ')}`);
      for (const member of this.visiting.slice(cycleStart)) this.inlined.set(member, null);
      return null;
    }
    if (!metric.analysis || !metric.references || metric.dialectSql === undefined) {
      this.inlined.set(metric, null);
      return null;
    }
    this.visiting.push(metric);
    const result = this.replaceReferences(metric, metric.analysis, metric.references, metric.dialectSql);
    this.visiting.pop();
    // A cycle found below may already have marked this metric as failed.
    if (this.inlined.get(metric) === null) return null;
    this.inlined.set(metric, result);
    return result;
  }

  private replaceReferences(metric: MetricElement, analysis: ExpressionAnalysis, references: MetricReference[], expression: string): Inlined | null {
    const fields: FieldElement[] = [];
    let hasAggregate = analysis.hasAggregate;
    const replacements: { start: number; end: number; text: string }[] = [];
    for (const [index, reference] of references.entries()) {
      const span = analysis.references[index] as ColumnReference;
      if (reference.kind === 'field') {
        const { field } = reference;
        if (field.sql === undefined) return null;
        if (!fields.includes(field)) fields.push(field);
        replacements.push({ start: span.start, end: span.end, text: field.analysis?.plainColumn ? field.sql : `(${field.sql})` });
      } else {
        if (reference.metric.windowed) {
          this.diagnostics.add('compile.windowed_metric_composition', this.at(metric), `metric:${metric.id}`,
            `metric ${metric.id}, ${metric.expression}: it names metric ${reference.metric.id}, whose expression holds a window function; the OSI Foundation defers composing windowed metrics (§6.10.5)`);
          return null;
        }
        const inner = this.inline(reference.metric);
        if (!inner) return null;
        const around = inner.hasAggregate ? metric.aggregateCalls?.find((call) => call.start <= span.start && span.end <= call.end) : undefined;
        if (around) {
          this.diagnostics.add('compile.nested_aggregate', this.at(metric), `metric:${metric.id}`,
            `metric ${metric.id}, ${metric.expression}: ${around.name} aggregates metric ${reference.metric.id}, which is itself an aggregate; the OSI Foundation defers nested aggregation`);
          return null;
        }
        for (const field of inner.fields) if (!fields.includes(field)) fields.push(field);
        hasAggregate ||= inner.hasAggregate;
        replacements.push({ start: span.start, end: span.end, text: `(${inner.sql})` });
      }
    }
    return { sql: replaceSpans(expression, replacements), fields, hasAggregate };
  }

  /**
   * The fact of a metric's `semantic_model` entry: the one dataset that is the `to` of no relationship (what
   * converters mean by a bare `COUNT(*)`), or the entry's only dataset; undefined when there is no such one.
   */
  private factOf(metric: MetricElement): DatasetElement | undefined {
    const datasets = this.model.datasets.filter((dataset) => dataset.model === metric.model && dataset.scope === metric.scope && dataset.relation);
    const targets = new Set(this.model.relationships.map((relationship) => relationship.to));
    const facts = datasets.length === 1 ? datasets : datasets.filter((dataset) => !targets.has(dataset));
    return facts.length === 1 ? facts[0] : undefined;
  }

  private finish(metric: MetricElement): CompiledMetric | undefined {
    const inlined = this.inline(metric);
    if (!inlined) return undefined;
    const target = `metric:${metric.id}`;
    if (!inlined.hasAggregate) {
      this.diagnostics.add('compile.metric_not_aggregate', this.at(metric), target, `metric ${metric.id} (${metric.expression}) aggregates nothing`);
      return undefined;
    }
    // An enriched field brings the datasets it reads: the metric joins them as well.
    const datasets = [...new Set(inlined.fields.flatMap((field) => [field.dataset, ...(field.enrichment ?? []).map((step) => step.joined)]))];
    const [first] = datasets;
    if (!first) {
      // A `COUNT(*)` reads no field: it counts the rows of the home the query gives it (Foundation D-016), so it
      // has no dataset of its own; the fact of its model (else a dataset of the model) gives its dialect and a
      // home when the query has no other.
      const home = this.factOf(metric) ?? this.model.datasets[0];
      return home && { metric, sql: inlined.sql, fields: [], datasets: [], base: home, steps: [], hasAggregate: true };
    }
    const datasources = [...new Set(datasets.map((dataset) => dataset.relation?.datasource))];
    if (datasources.length > 1) {
      // As a field across datasources: a query using it is federated, compiled again in the federation's dialect.
      this.diagnostics.add('compile.cross_datasource_metric', this.at(metric), target,
        `metric ${metric.id} reads datasets of datasources ${datasources.join(' and ')}: a query using it is federated`);
    }
    const plan = this.joins.plan(datasets);
    if (!plan.ok) {
      this.diagnostics.add(plan.reason === 'missing' ? 'compile.join_path_missing' : 'compile.join_path_ambiguous', this.at(metric), target, `metric ${metric.id}: ${plan.message}`);
      return undefined;
    }
    return { metric, sql: inlined.sql, fields: inlined.fields, datasets, base: plan.base, steps: plan.steps, hasAggregate: true };
  }
}
