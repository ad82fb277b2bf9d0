/**
 * Plans the `answer` capability without a model, from the authorized context only (docs/tasks.md): a goal
 * that is itself a SELECT (or WITH) runs as written; any other goal is matched against the semantic
 * package's metrics and fields and becomes one semantic query, which the service compiles against the
 * package (docs/semantic-query.md) and runs as the caller.
 */
import type { AuthorizedContext, AuthorizedSemantic, SemanticQuery } from '../../core/plugin-api/index.js';
import { goalQuery } from './goal-query.js';
import { findGoalTerms } from './goal-terms.js';

export type AnswerPlan =
  /** Run `sql`; `subject` says what it computes. */
  | { kind: 'query'; sql: string; subject: string; notes: string[] }
  /** Ask the service to compile and run `query`; `subject` says what it computes (`revenue by region`). */
  | { kind: 'semanticQuery'; query: SemanticQuery; subject: string; notes: string[] }
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
  const terms = findGoalTerms(text, context.semantic);
  if (terms.length === 0) return unmatched(context.semantic);
  const { query, subject } = goalQuery(text, terms, context.semantic);
  return { kind: 'semanticQuery', query, subject, notes: [] };
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

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
