/**
 * Turns the terms of a goal into a semantic query (docs/semantic-query.md), which the service compiles and
 * runs: the metrics named are the measures, the fields named the dimensions, a grain word after "by" or "per"
 * (`by month`) buckets a time field of the first metric's dataset, and a word that a field's description
 * lists among its values (`paid` for `status`: "pending, paid, shipped…") filters on that value.
 */
import type { AuthorizedSemantic, PackageDataset, PackageField, PackageMetric, QueryDimension, QueryFilter, SemanticQuery, TimeGrain } from '../../core/plugin-api/index.js';
import { TIME_GRAINS } from '../../core/plugin-api/index.js';
import { wordsOf, type Dimension, type GoalTerm } from './goal-terms.js';

export interface GoalQuery {
  query: SemanticQuery;
  /** What it computes, e.g. `revenue by region, month for status paid`. */
  subject: string;
}

/** The datasets reachable from `start` along relationships from their many side to their one side, by distance. */
function distancesFrom(semantic: AuthorizedSemantic, start: readonly string[]): Map<string, number> {
  const distance = new Map(start.map((id) => [id, 0]));
  const queue = [...start];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    for (const relationship of semantic.relationships) {
      if (relationship.from !== id || distance.has(relationship.to)) continue;
      distance.set(relationship.to, (distance.get(id) ?? 0) + 1);
      queue.push(relationship.to);
    }
  }
  return distance;
}

/** Words of the goal that name a grain after `by` or `per`. */
function grainsOf(words: readonly string[]): TimeGrain[] {
  return words.flatMap((word, index) => {
    const previous = words[index - 1];
    return (previous === 'by' || previous === 'per') && TIME_GRAINS.includes(word as TimeGrain) ? [word as TimeGrain] : [];
  });
}

/** The values a field's description lists (`pending, paid, shipped, delivered or cancelled`), as written. */
function listedValues(field: PackageField): string[] {
  const description = field.description ?? '';
  if (!/,/.test(description)) return [];
  return description.split(/,|\bor\b|\band\b/).map((value) => value.trim()).filter((value) => /^[\p{L}\p{N}_-]+$/u.test(value));
}

export function goalQuery(goal: string, terms: readonly GoalTerm[], semantic: AuthorizedSemantic): GoalQuery {
  const metrics = [...new Set(terms.flatMap((term) => (term.kind === 'metric' ? [term.metric] : [])))];
  const homes = metrics.map((metric) => metric.baseDataset);
  const datasets = new Map(semantic.datasets.map((dataset) => [dataset.id, dataset]));
  const near = distancesFrom(semantic, homes.length > 0 ? homes : [terms.flatMap((term) => (term.kind === 'dimension' ? [term.candidates[0]?.dataset.id ?? ''] : []))[0] ?? '']);
  // An ambiguous phrase (`name`) means the field nearest to the metrics' datasets.
  const distance = (dimension: Dimension) => near.get(dimension.dataset.id) ?? Number.POSITIVE_INFINITY;
  const chosen = terms.flatMap((term) => (term.kind === 'dimension' ? [[...term.candidates].sort((a, b) => distance(a) - distance(b))[0]] : []))
    .filter((dimension): dimension is Dimension => dimension !== undefined);
  const fields = [...new Map(chosen.map((dimension) => [dimension.field.id, dimension])).values()];

  const words = wordsOf(goal);
  const timeDataset = datasets.get(homes[0] ?? fields[0]?.dataset.id ?? '');
  const timeField = timeDataset?.fields.find((field) => field.isTime);
  const grains = timeDataset && timeField ? grainsOf(words).map((grain) => ({ dataset: timeDataset, field: timeField, grain })) : [];

  const filters = filtersOf(words, semantic, near);
  const dimensions: QueryDimension[] = [
    ...fields.map(({ dataset, field }) => ({ field: `${dataset.name}.${field.name}` })),
    ...grains.map(({ dataset, field, grain }) => ({ field: `${dataset.name}.${field.name}`, grain, alias: grain })),
  ];
  const query: SemanticQuery = {
    dimensions,
    measures: metrics.map((metric) => ({ metric: metric.name })),
    orderBy: metrics[0] ? [{ field: metrics[0].name, direction: 'desc' }] : dimensions.map((dimension) => ({ field: dimension.alias ?? dimension.field.split('.')[1] ?? '', direction: 'asc' as const })),
  };
  if (filters.length > 0) query.where = filters.map(({ filter }) => filter);
  return { query, subject: subjectOf(metrics, [...fields.map(({ field }) => field.name), ...grains.map(({ grain }) => grain)], filters) };
}

/** Words the goal says that a field of a reachable dataset lists among its values. */
function filtersOf(words: readonly string[], semantic: AuthorizedSemantic, near: Map<string, number>): { filter: QueryFilter; label: string }[] {
  const found: { filter: QueryFilter; label: string }[] = [];
  const reachable = semantic.datasets.filter((dataset: PackageDataset) => near.has(dataset.id));
  for (const dataset of reachable) {
    for (const field of dataset.fields) {
      const values = listedValues(field).filter((value) => words.includes(wordsOf(value).join(' ')));
      if (values.length === 0) continue;
      found.push({ filter: { field: `${dataset.name}.${field.name}`, operator: 'in', values }, label: `${field.name} ${values.join(' or ')}` });
    }
  }
  return found;
}

function subjectOf(metrics: readonly PackageMetric[], groups: readonly string[], filters: readonly { label: string }[]): string {
  const measured = metrics.map((metric) => metric.name).join(', ');
  const by = groups.join(', ');
  const base = measured === '' ? by : by === '' ? measured : `${measured} by ${by}`;
  return filters.length === 0 ? base : `${base} for ${filters.map((filter) => filter.label).join(' and ')}`;
}
