/**
 * Join paths from relationships. A metric over several datasets starts at a dataset from which every other
 * one is reached along many-to-one relationships (no row is repeated); only when there is none does a
 * path go from a one side to a many side, and that step is marked `fanOut`. Each dataset must be reached
 * by exactly one shortest path: two would give two different answers.
 */
import type { DatasetElement, JoinStep, RelationshipElement } from './model-elements.js';

export type { JoinStep } from './model-elements.js';

export type JoinPlan =
  | { ok: true; base: DatasetElement; steps: JoinStep[] }
  | { ok: false; reason: 'missing' | 'ambiguous'; message: string };

interface Search {
  distance: Map<DatasetElement, number>;
  /** Number of shortest paths, counted up to 2. */
  paths: Map<DatasetElement, number>;
  parent: Map<DatasetElement, JoinStep>;
}

export class JoinGraph {
  private readonly edges = new Map<DatasetElement, JoinStep[]>();

  /** Only relationships that bound to the catalog take part. */
  constructor(relationships: readonly RelationshipElement[]) {
    for (const relationship of relationships) {
      const { from, to } = relationship;
      if (!from || !to || !relationship.fromColumns || from === to) continue;
      const { cardinality } = relationship;
      // A step towards a "many" side repeats rows (§6.4 of the Foundation infers which side is many).
      this.add({ relationship, from, joined: to, fanOut: cardinality === 'oneToMany' || cardinality === 'manyToMany' });
      this.add({ relationship, from: to, joined: from, fanOut: cardinality === 'manyToOne' || cardinality === 'manyToMany' });
    }
  }

  private add(step: JoinStep): void {
    this.edges.set(step.from, [...(this.edges.get(step.from) ?? []), step]);
  }

  /** How to join `datasets` (in the order the expression names them) into one query. */
  plan(datasets: readonly DatasetElement[]): JoinPlan {
    const [first] = datasets;
    if (!first) return { ok: false, reason: 'missing', message: 'no dataset to start from' };
    if (datasets.length === 1) return { ok: true, base: first, steps: [] };
    for (const base of datasets) {
      const search = this.search(base, datasets, false);
      if (datasets.every((dataset) => search.distance.has(dataset))) return this.planFrom(base, datasets, search);
    }
    const search = this.search(first, datasets, true);
    const unreachable = datasets.find((dataset) => !search.distance.has(dataset));
    if (unreachable) {
      return { ok: false, reason: 'missing', message: `no chain of relationships connects dataset ${first.id} to ${unreachable.id}` };
    }
    return this.planFrom(first, datasets, search);
  }

  /**
   * How rows of `to` relate to one row of `from` along relationships: `enrich` when every step goes towards a
   * one side (at most one row, §4.3.1 of the Foundation), `finer` when a step goes towards a many side,
   * `manyToMany` when a step crosses a many-to-many relationship, `none` when nothing connects them.
   */
  reach(from: DatasetElement, to: DatasetElement): 'enrich' | 'finer' | 'manyToMany' | 'none' {
    if (this.search(from, [to], false).distance.has(to)) return 'enrich';
    const search = this.search(from, [to], true);
    if (!search.distance.has(to)) return 'none';
    for (let step = search.parent.get(to); step; step = search.parent.get(step.from)) {
      if (step.relationship.cardinality === 'manyToMany') return 'manyToMany';
    }
    return 'finer';
  }

  /**
   * The many-to-one steps from `home` to each of `targets`, the datasets a field enriches its rows from
   * (Foundation §4.3.1). Each must be reached along exactly one chain of many-to-one (or one-to-one)
   * relationships, of any length: with two the value is ambiguous (`E_AMBIGUOUS_PATH`), and the query
   * compiler, which joins each dataset once, would refuse it too. Steps come parents first.
   */
  enrichment(home: DatasetElement, targets: readonly DatasetElement[]): { ok: true; steps: JoinStep[] } | { ok: false; ambiguous: DatasetElement } {
    const steps: JoinStep[] = [];
    const depth = new Map<JoinStep, number>();
    for (const target of targets) {
      const found = this.manyToOnePaths(home, target, new Set([home]));
      if (found.count !== 1) return { ok: false, ambiguous: target };
      found.first.forEach((step, index) => {
        if (!depth.has(step)) steps.push(step);
        depth.set(step, index);
      });
    }
    return { ok: true, steps: steps.sort((a, b) => (depth.get(a) ?? 0) - (depth.get(b) ?? 0)) };
  }

  /** Simple many-to-one chains from `from` to `target`, counted up to 2, with the first found. */
  private manyToOnePaths(from: DatasetElement, target: DatasetElement, onPath: Set<DatasetElement>): { count: number; first: JoinStep[] } {
    if (from === target) return { count: 1, first: [] };
    let count = 0;
    let first: JoinStep[] = [];
    for (const step of this.edges.get(from) ?? []) {
      if (step.fanOut || onPath.has(step.joined)) continue;
      onPath.add(step.joined);
      const below = this.manyToOnePaths(step.joined, target, onPath);
      onPath.delete(step.joined);
      if (below.count === 0) continue;
      if (count === 0) first = [step, ...below.first];
      count = Math.min(2, count + below.count);
      if (count === 2) break;
    }
    return { count, first };
  }

  private planFrom(base: DatasetElement, datasets: readonly DatasetElement[], search: Search): JoinPlan {
    const ambiguous = datasets.find((dataset) => (search.paths.get(dataset) ?? 0) > 1);
    if (ambiguous) {
      return { ok: false, reason: 'ambiguous', message: `datasets ${base.id} and ${ambiguous.id} are connected by more than one shortest chain of relationships` };
    }
    const steps = new Set<JoinStep>();
    for (const dataset of datasets) {
      for (let step = search.parent.get(dataset); step; step = search.parent.get(step.from)) steps.add(step);
    }
    const ordered = [...steps].sort((a, b) => (search.distance.get(a.joined) ?? 0) - (search.distance.get(b.joined) ?? 0));
    return { ok: true, base, steps: ordered };
  }

  /**
   * Breadth-first from `base`, counting shortest paths to tell a single path from several. It stops once
   * every target is found and the level of the farthest one is complete (its path counts are final).
   */
  private search(base: DatasetElement, targets: readonly DatasetElement[], allowFanOut: boolean): Search {
    const distance = new Map([[base, 0]]);
    const paths = new Map([[base, 1]]);
    const parent = new Map<DatasetElement, JoinStep>();
    const queue = [base];
    for (let index = 0; index < queue.length; index++) {
      const current = queue[index] as DatasetElement;
      const level = distance.get(current) ?? 0;
      if (targets.every((target) => (distance.get(target) ?? Number.POSITIVE_INFINITY) <= level)) break;
      const next = level + 1;
      for (const step of this.edges.get(current) ?? []) {
        if (step.fanOut && !allowFanOut) continue;
        const known = distance.get(step.joined);
        if (known === undefined) {
          distance.set(step.joined, next);
          paths.set(step.joined, paths.get(current) ?? 1);
          parent.set(step.joined, step);
          queue.push(step.joined);
        } else if (known === next) {
          paths.set(step.joined, Math.min(2, (paths.get(step.joined) ?? 0) + (paths.get(current) ?? 1)));
        }
      }
    }
    return { distance, paths, parent };
  }
}
