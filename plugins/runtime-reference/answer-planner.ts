/**
 * Plans the `answer` capability without a model, from the authorized context only (docs/tasks.md): a goal
 * that is itself a SELECT (or WITH) runs as written; any other goal is matched against the semantic
 * package's metrics and fields and compiled to one grouped query.
 */
import type { PackageMetric, PackageRelationship, AuthorizedContext, AuthorizedSemantic } from '../../core/plugin-api/index.js';
import { findGoalTerms, type GoalTerm } from './goal-terms.js';
import { baseDatasetOf, compileSemanticQuery, manyToOnePaths, metricDatasetIds, type Dimension } from './semantic-sql.js';

export type AnswerPlan =
  /** Run `sql`; `subject` says what it computes (`revenue by region`), `notes` what was left out and why. */
  | { kind: 'query'; sql: string; subject: string; notes: string[] }
  /** The goal cannot be planned as it stands: `detail` is one sentence, `answer` the same for a person, in Markdown. */
  | { kind: 'input_required'; detail: string; answer: string }
  | { kind: 'failed'; detail: string };

const SQL_GOAL = /^(select|with)\b/i;

export function planAnswer(goal: string, context: AuthorizedContext): AnswerPlan {
  const vdb = `VDB ${context.vdb.name} version ${context.vdb.version}`;
  if (context.access === 'unavailable') {
    return { kind: 'failed', detail: `the caller has no data access to ${vdb} (access: unavailable), so there is nothing the task may read` };
  }
  const text = goal.trim();
  if (SQL_GOAL.test(text)) return { kind: 'query', sql: text, subject: 'your query', notes: [] };
  if (!context.semantic) {
    const detail = `${vdb} has no active semantic model, so only a goal that is a SELECT statement can be answered`;
    return { kind: 'input_required', detail, answer: `${capitalized(detail)}.` };
  }
  // the SQL it compiles quotes names as PostgreSQL does
  if (context.sqlFamily !== 'postgres') {
    const detail = `the reference runtime compiles semantic questions for PostgreSQL only, and ${vdb} speaks ${context.sqlFamily}: ask with a SELECT statement`;
    return { kind: 'input_required', detail, answer: `${capitalized(detail)}.` };
  }
  const terms = findGoalTerms(text, context.semantic);
  if (terms.length === 0) return unmatched(context.semantic);
  return planSelection(context.semantic, terms);
}

function planSelection(semantic: AuthorizedSemantic, terms: GoalTerm[]): AnswerPlan {
  const named = [...new Set(terms.flatMap((term) => (term.kind === 'metric' ? [term.metric] : [])))];
  const baseId = named[0]?.baseDataset;
  // Metrics on another base dataset would need a join that repeats rows of one of them: left out, and said so.
  const metrics = named.filter((metric) => metric.baseDataset === baseId);
  const notes = named.filter((metric) => metric.baseDataset !== baseId).map((metric) =>
    `${metric.name} is left out: it is measured on ${datasetName(semantic, metric.baseDataset)}, not on ${datasetName(semantic, baseId)}; ask for it separately`);

  const dimensionTerms = terms.flatMap((term) => (term.kind === 'dimension' ? [term] : []));
  const first = dimensionTerms[0]?.candidates[0];
  const base = baseDatasetOf(semantic, { metrics, dimensions: first ? [first] : [] });
  const paths = base ? manyToOnePaths(semantic, metricDatasetIds(base, metrics)) : new Map<string, PackageRelationship[]>();
  // An ambiguous phrase (`name`) means the field nearest to the query's datasets.
  const distance = (dimension: Dimension) => paths.get(dimension.dataset.id)?.length ?? Number.POSITIVE_INFINITY;
  const chosen = dimensionTerms.map((term) => [...term.candidates].sort((a, b) => distance(a) - distance(b))[0]);
  const dimensions = [...new Map(chosen.flatMap((dimension) => (dimension ? [[dimension.field.id, dimension] as const] : []))).values()];

  const compiled = compileSemanticQuery(semantic, { metrics, dimensions });
  if (compiled.ok) return { kind: 'query', sql: compiled.sql, subject: subjectOf(metrics, dimensions), notes };
  const { dataset, field } = compiled.unreachable;
  const others = subjectOf(metrics, dimensions.filter((dimension) => dimension !== compiled.unreachable));
  const detail = `${field.name} (of ${dataset.name}) cannot be combined with ${others}: no many-to-one relationship leads from ${compiled.from.name} to ${dataset.name}`;
  return { kind: 'input_required', detail, answer: `${capitalized(detail)}. Ask for ${field.name} with a metric measured on ${dataset.name} or a dataset that refers to it.` };
}

function subjectOf(metrics: readonly PackageMetric[], dimensions: readonly Dimension[]): string {
  const fields = dimensions.map(({ field }) => field.name).join(', ');
  if (metrics.length === 0) return fields;
  const measured = metrics.map((metric) => metric.name).join(', ');
  return fields === '' ? measured : `${measured} by ${fields}`;
}

function unmatched(semantic: AuthorizedSemantic): AnswerPlan {
  const metrics = semantic.metrics.map((metric) => metric.name);
  const dimensions = semantic.datasets.flatMap((dataset) => dataset.fields.map((field) => `${dataset.name}.${field.name}`));
  const detail = `the goal names no metric or field of the semantic model; it knows the metrics ${metrics.join(', ') || '(none)'}`
    + ` and the dimensions ${dimensions.join(', ') || '(none)'}`;
  const list = (names: string[]) => (names.length === 0 ? '- (none)' : names.map((name) => `- ${name}`).join('\n'));
  const answer = [
    'I could not match the goal to a metric or field of the semantic model.',
    'Ask for a metric, optionally by dimensions (e.g. "<metric> by <dimension>"), or send a SELECT statement.',
    `\n**Metrics**\n\n${list(metrics)}`,
    `\n**Dimensions**\n\n${list(dimensions)}`,
  ].join('\n');
  return { kind: 'input_required', detail, answer };
}

function datasetName(semantic: AuthorizedSemantic, id: string | undefined): string {
  return semantic.datasets.find((dataset) => dataset.id === id)?.name ?? String(id);
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
