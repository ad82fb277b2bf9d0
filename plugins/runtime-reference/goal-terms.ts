/**
 * Finds the semantic terms a goal names: metric names and synonyms, field names, labels and synonyms.
 * Matching is by whole words, case-insensitive, with plurals folded (`regions` = `region`), and longest
 * phrase first, so that "total sales" is one term (revenue) rather than the field `total` and `sales`.
 */
import type { JsonValue, PackageDataset, PackageField, PackageMetric, AuthorizedSemantic } from '../../core/plugin-api/index.js';

/** A field to group by, with the dataset it belongs to. */
export interface Dimension {
  dataset: PackageDataset;
  field: PackageField;
}

/** What one phrase of the goal names: a metric, or fields (several when the phrase is ambiguous, e.g. `name`). */
export type GoalTerm =
  | { kind: 'metric'; phrase: string; metric: PackageMetric }
  | { kind: 'dimension'; phrase: string; candidates: Dimension[] };

type Target = { kind: 'metric'; metric: PackageMetric } | { kind: 'dimension'; dimension: Dimension };

/** `order_count` -> `order count`; `Regions` -> `region`; `categories` -> `category`; `status` stays. */
export function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== '')
    .map((word) => {
      if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
      if (word.length > 3 && word.endsWith('s') && !/(ss|us)$/.test(word)) return word.slice(0, -1);
      return word;
    });
}

/** The `synonyms` of an `aiContext` object; none for any other shape. */
export function synonymsOf(aiContext: JsonValue | null): string[] {
  if (aiContext === null || typeof aiContext !== 'object' || Array.isArray(aiContext)) return [];
  const synonyms = aiContext['synonyms'];
  return Array.isArray(synonyms) ? synonyms.filter((synonym): synonym is string => typeof synonym === 'string') : [];
}

function vocabulary(semantic: AuthorizedSemantic): { words: string[]; target: Target }[] {
  const entries: { words: string[]; target: Target }[] = [];
  for (const metric of semantic.metrics) {
    for (const phrase of [metric.name, ...synonymsOf(metric.aiContext)]) entries.push({ words: wordsOf(phrase), target: { kind: 'metric', metric } });
  }
  for (const dataset of semantic.datasets) {
    for (const field of dataset.fields) {
      const phrases = [field.name, ...(field.label === null ? [] : [field.label]), ...synonymsOf(field.aiContext)];
      for (const phrase of phrases) entries.push({ words: wordsOf(phrase), target: { kind: 'dimension', dimension: { dataset, field } } });
    }
  }
  return entries.filter((entry) => entry.words.length > 0);
}

function occursAt(goal: readonly string[], start: number, phrase: readonly string[]): boolean {
  return phrase.every((word, offset) => goal[start + offset] === word);
}

/**
 * The terms of `goal`, in the order they appear. Overlapping phrases go to the longest; a phrase naming a
 * metric and fields is the metric; a phrase naming several metrics is the first of them.
 */
export function findGoalTerms(goal: string, semantic: AuthorizedSemantic): GoalTerm[] {
  const words = wordsOf(goal);
  const spans = new Map<string, { start: number; length: number; targets: Target[] }>();
  for (const entry of vocabulary(semantic)) {
    for (let start = 0; start + entry.words.length <= words.length; start += 1) {
      if (!occursAt(words, start, entry.words)) continue;
      const key = `${start}:${entry.words.length}`;
      const span = spans.get(key) ?? { start, length: entry.words.length, targets: [] };
      span.targets.push(entry.target);
      spans.set(key, span);
    }
  }

  const taken = new Set<number>();
  const accepted = [...spans.values()]
    .sort((a, b) => b.length - a.length || a.start - b.start)
    .filter((span) => {
      const covered = Array.from({ length: span.length }, (_, offset) => span.start + offset);
      if (covered.some((index) => taken.has(index))) return false;
      covered.forEach((index) => taken.add(index));
      return true;
    })
    .sort((a, b) => a.start - b.start);

  return accepted.map((span): GoalTerm => {
    const phrase = words.slice(span.start, span.start + span.length).join(' ');
    const metric = span.targets.find((target) => target.kind === 'metric');
    if (metric) return { kind: 'metric', phrase, metric: metric.metric };
    const candidates = span.targets.flatMap((target) => (target.kind === 'dimension' ? [target.dimension] : []));
    // One field can be named by two of its own phrases that fold alike (`id` and `ID`): list it once.
    return { kind: 'dimension', phrase, candidates: [...new Map(candidates.map((candidate) => [candidate.field.id, candidate])).values()] };
  });
}
