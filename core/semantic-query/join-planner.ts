/**
 * Join paths of a semantic query (OSI Foundation §6.9): from a measure's home dataset to every dataset the
 * query needs. A unique path of many-to-one steps is used as is; two paths are `E_AMBIGUOUS_PATH`, none
 * `E_NO_PATH`. Without a many-to-one path, the shortest path may go from a one side to a many side first
 * (through a bridge, or to a finer dataset: rows then repeat and the plan de-duplicates, §6.8.1), or climb
 * and then cross a bridge (sales → item ← item_promo → promo); a path that climbs to a one side and ends on
 * another many side joins two facts through a shared dimension without a bridge: `E3012_MN_NO_SAFE_REWRITE`
 * (the stitch of §6.8.2 is for measures, not joins), as does an N:N edge after a climb.
 * A dataset the model declares `role: bridge` is the M:N path between the datasets it links, before any
 * structural search: the model said which way M:N goes, so another path of the same length is no ambiguity.
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
    const bridged = this.throughDeclaredBridge(base, target);
    if (bridged) return bridged;
    const shortest = this.shortest(base, target);
    if (!shortest) return { ok: false, code: 'E_NO_PATH', message: `no relationship path connects ${base.name} to ${target.name}` };
    if (shortest.count > 1) return ambiguous(base, target);
    const climbed = shortest.steps.findIndex((edge) => !edge.fanOut);
    if (climbed >= 0 && !this.bridgedOnly(shortest.steps.slice(climbed))) {
      return {
        ok: false, code: 'E3012_MN_NO_SAFE_REWRITE',
        message: `${base.name} reaches ${target.name} only through ${shortest.steps[climbed]?.to.name}, a dimension both refer to, which is many-to-many with no bridge (along ${shortest.steps.map((edge) => edge.relationship.name).join(', ')}): add a bridge dataset, declare the keys that make a relationship many-to-one, or ask for ${target.name} with a measure of its own`,
      };
    }
    return { ok: true, steps: shortest.steps };
  }

  /**
   * The path through a declared bridge: down from the base to the bridge (the reverse of the bridge's
   * many-to-one path to it), then the bridge's many-to-one path to the target. Undefined when no declared
   * bridge links the two; two bridges (or two paths around one) are ambiguous.
   */
  private throughDeclaredBridge(base: PackageDataset, target: PackageDataset): PathOutcome | undefined {
    const found: Edge[][] = [];
    for (const bridge of this.model.pkg.datasets) {
      if (bridge.role !== 'bridge' || bridge === base || bridge === target) continue;
      const up = this.countManyToOne(bridge, base, new Map(), new Set());
      const down = this.countManyToOne(bridge, target, new Map(), new Set());
      if (up.count === 0 || down.count === 0) continue;
      if (up.count > 1 || down.count > 1) return ambiguous(base, target);
      found.push([...up.first.map((edge) => this.reverse(edge)).reverse(), ...down.first]);
    }
    if (found.length > 1) return ambiguous(base, target);
    return found[0] && { ok: true, steps: found[0] };
  }

  /**
   * Whether every descent of a path that has climbed is into a bridge (§6.8.1: a dataset with many-to-one
   * relationships to two others, recognised structurally): a one-to-many step, and the path climbs out of
   * the dataset it reached (sales → item ← item_promo → promo). A descent the path ends in reaches a sibling
   * fact through a shared dimension (orders → customers ← returns), and an N:N edge has no bridge at all.
   */
  private bridgedOnly(steps: readonly Edge[]): boolean {
    return steps.every((edge, index) => {
      if (!edge.fanOut) return true;
      if (this.reverse(edge).fanOut) return false;
      const out = steps.slice(index + 1).find((next) => !next.fanOut || this.reverse(next).fanOut);
      return out !== undefined && !out.fanOut;
    });
  }

  private reverse(edge: Edge): Edge {
    const back = this.model.edges.get(edge.to)?.find((candidate) => candidate.relationship === edge.relationship && candidate.to === edge.from);
    if (!back) throw new Error(`relationship ${edge.relationship.name} has no reverse edge`);
    return back;
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
