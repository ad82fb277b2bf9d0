/**
 * Join paths of a semantic query (OSI Foundation §6.9): from a measure's home dataset to every dataset the
 * query needs. A unique path of many-to-one steps is used as is; two paths are `E_AMBIGUOUS_PATH`, none
 * `E_NO_PATH`. Without a many-to-one path, the shortest path may go from a one side to a many side first
 * (through a bridge, or to a finer dataset: rows then repeat and the plan de-duplicates, §6.8.1); a path
 * that climbs to a one side and then descends to another many side joins two facts through a shared
 * dimension without a bridge: `E3012_MN_NO_SAFE_REWRITE` (the stitch of §6.8.2 is for measures, not joins).
 */
import type { PackageDataset } from '../plugin-api/semantic-package.js';
import type { Edge, ModelIndex } from './model-index.js';
import type { OsiCode } from './query-errors.js';

export type PathOutcome = { ok: true; steps: Edge[] } | { ok: false; code: OsiCode; message: string };

export class JoinPlanner {
  private readonly memo = new Map<string, PathOutcome>();

  constructor(private readonly model: ModelIndex) {}

  path(base: PackageDataset, target: PackageDataset): PathOutcome {
    if (base === target) return { ok: true, steps: [] };
    const key = `${base.id}\u0000${target.id}`;
    let outcome = this.memo.get(key);
    if (!outcome) this.memo.set(key, (outcome = this.find(base, target)));
    return outcome;
  }

  /** True when some chain of relationships, in any direction, connects the two datasets. */
  connected(a: PackageDataset, b: PackageDataset): boolean {
    const seen = new Set([a]);
    const queue = [a];
    for (let current = queue.shift(); current; current = queue.shift()) {
      if (current === b) return true;
      for (const edge of this.model.edges.get(current) ?? []) if (!seen.has(edge.to)) seen.add(edge.to), queue.push(edge.to);
    }
    return false;
  }

  private find(base: PackageDataset, target: PackageDataset): PathOutcome {
    const counts = new Map<PackageDataset, { count: number; first: Edge[] }>();
    const manyToOne = this.countManyToOne(base, target, counts, new Set());
    if (manyToOne.count > 1) return ambiguous(base, target);
    if (manyToOne.count === 1) return { ok: true, steps: manyToOne.first };
    const shortest = this.shortest(base, target);
    if (!shortest) return { ok: false, code: 'E_NO_PATH', message: `no relationship path connects ${base.name} to ${target.name}` };
    if (shortest.count > 1) return ambiguous(base, target);
    const climbed = shortest.steps.findIndex((edge) => !edge.fanOut);
    if (climbed >= 0 && shortest.steps.slice(climbed).some((edge) => edge.fanOut)) {
      return {
        ok: false, code: 'E3012_MN_NO_SAFE_REWRITE',
        message: `${base.name} reaches ${target.name} only through ${shortest.steps[climbed]?.to.name}, a dimension both refer to, which is many-to-many with no bridge: add a bridge dataset, or ask for ${target.name} with a measure of its own`,
      };
    }
    return { ok: true, steps: shortest.steps };
  }

  /** Many-to-one paths from `from` to `target`, counted up to 2, with the first found. */
  private countManyToOne(from: PackageDataset, target: PackageDataset, memo: Map<PackageDataset, { count: number; first: Edge[] }>, onPath: Set<PackageDataset>): { count: number; first: Edge[] } {
    if (from === target) return { count: 1, first: [] };
    const known = memo.get(from);
    if (known) return known;
    onPath.add(from);
    let count = 0;
    let first: Edge[] = [];
    for (const edge of this.model.edges.get(from) ?? []) {
      if (edge.fanOut || onPath.has(edge.to)) continue;
      const below = this.countManyToOne(edge.to, target, memo, onPath);
      if (below.count === 0) continue;
      if (count === 0) first = [edge, ...below.first];
      count = Math.min(2, count + below.count);
    }
    onPath.delete(from);
    const result = { count, first };
    memo.set(from, result);
    return result;
  }

  /** Breadth first in both directions: the shortest path and how many there are (up to 2). */
  private shortest(base: PackageDataset, target: PackageDataset): { steps: Edge[]; count: number } | undefined {
    const distance = new Map([[base, 0]]);
    const paths = new Map([[base, 1]]);
    const parent = new Map<PackageDataset, Edge>();
    const queue = [base];
    for (let index = 0; index < queue.length; index++) {
      const current = queue[index] as PackageDataset;
      const level = distance.get(current) ?? 0;
      if ((distance.get(target) ?? Number.POSITIVE_INFINITY) <= level) break;
      for (const edge of this.model.edges.get(current) ?? []) {
        const known = distance.get(edge.to);
        if (known === undefined) {
          distance.set(edge.to, level + 1);
          paths.set(edge.to, paths.get(current) ?? 1);
          parent.set(edge.to, edge);
          queue.push(edge.to);
        } else if (known === level + 1) {
          paths.set(edge.to, Math.min(2, (paths.get(edge.to) ?? 0) + (paths.get(current) ?? 1)));
        }
      }
    }
    if (!distance.has(target)) return undefined;
    const steps: Edge[] = [];
    for (let edge = parent.get(target); edge; edge = parent.get(edge.from)) steps.unshift(edge);
    return { steps, count: paths.get(target) ?? 1 };
  }
}

function ambiguous(base: PackageDataset, target: PackageDataset): PathOutcome {
  return { ok: false, code: 'E_AMBIGUOUS_PATH', message: `more than one relationship path connects ${base.name} to ${target.name}; the model must leave one` };
}
