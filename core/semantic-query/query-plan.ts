/**
 * The plan of a semantic query, as typed data: what each result column groups by or aggregates, the home
 * dataset of each aggregate (the home of `COUNT(*)`), the groups of aggregates sharing a home, the joins each
 * group makes and the key it is de-duplicated by, the columns read (docs/semantic-query.md, "How a query is
 * computed"). Its values are resolved expressions (`Resolved`): trees whose names are references to the
 * model (fields, columns, dimensions, aggregates) and whose literals are values. It holds no SQL text of its
 * own: sql-writer.ts alone writes the statement from it, for a dialect.
 */
import type { PackageDataset, PackageMetric } from '../plugin-api/semantic-package.js';
import type { TimeGrain } from '../plugin-api/semantic-query-syntax.js';
import type { Expr } from './expression-ast.js';
import type { JoinPlanner } from './join-planner.js';
import type { Edge, JoinNeed, ResolvedField } from './model-index.js';
import { queryInvalid } from './query-errors.js';

/** What a resolved name means (an expression's `ref`). */
export type Reference =
  /** A field's value at row level (a windowed field's: its column of its dataset's derived table). */
  | { kind: 'field'; field: ResolvedField }
  /** A column of a dataset's relation that no field names, read in an aggregate (decision 35). */
  | { kind: 'column'; dataset: PackageDataset; column: string }
  /** A structured filter's value, bound from the query at run time; `like`: bound as that LIKE pattern. */
  | { kind: 'filterValue'; clause: 'where' | 'having'; entry: number; value: number; like?: { before: boolean; after: boolean } }
  /** A window inside an aggregate: computed in its dataset's derived table, before the query's joins (decision 22). */
  | { kind: 'window'; dataset: PackageDataset; window: Resolved; edges: readonly Edge[] }
  /** A dimension, at the query's grain. */
  | { kind: 'dimension'; dimension: Dimension }
  /** An aggregate, at the query's grain. */
  | { kind: 'aggregate'; aggregate: Aggregate };

/** An expression whose names are resolved. */
export type Resolved = Expr<Reference>;
export type ResolvedCall = Extract<Resolved, { kind: 'call' }>;

export interface Dimension {
  output: string;
  column: string;
  field: ResolvedField;
  grain: TimeGrain | undefined;
  /** Its value at row level. */
  value: Resolved;
}

export interface Aggregate {
  /** What tells two aggregates of the query apart: the same key is the same aggregate. */
  key: string;
  /** How an error names it: the metric, or the call as the caller wrote it. */
  label: string;
  column: string;
  /** The aggregate call, its arguments at row level; or a model metric computed from its package SQL. */
  value: { kind: 'call'; call: ResolvedCall } | { kind: 'metric'; metric: PackageMetric };
  /** Undefined for COUNT(*) without dimensions or filters until the groups are formed: the others' home. */
  home?: PackageDataset;
  /** A model metric's COUNT(*): the fact of its model, counted when the query has no other dataset. */
  fact?: PackageDataset;
  /** The datasets it reads and the joins of the enriched fields among them. */
  needs: JoinNeed[];
  group?: Group;
  /** A COUNT: 0, not NULL, where its fact has no row (§6.11.5). */
  counts?: boolean;
}

export interface Group {
  alias: string;
  home: PackageDataset;
  aggregates: Aggregate[];
  /** Set once every aggregate is known. */
  joins?: GroupJoins;
}

/** The joins of one group: to what its aggregates read (`outer`), and to the dimensions and filters (`inner`). */
export interface GroupJoins {
  outer: Edge[];
  inner: Edge[];
  /**
   * Where an inner join fans out (rows of the home repeat), the key the home's rows are de-duplicated by per
   * group key before aggregating (§6.8.1); undefined where none does, or the group has no aggregate.
   */
  key: string[] | undefined;
}

/** A column an aggregate of the query reads that no field names (docs/semantic-query.md decision 35). */
export interface ColumnReference {
  dataset: PackageDataset;
  column: string;
  /** What a caller who may not read it is told: what a column that does not exist gets. */
  refusal: { target: string; message: string };
}

/** Every column the statement reads, per dataset: what the caller's grants must cover. */
export type Reads = Map<PackageDataset, Set<string>>;

/** A resolved expression of a clause, and where it is in the query (what an error names). */
export interface Term {
  value: Resolved;
  target: string;
}

/** A column of the result. */
export interface Output extends Term {
  name: string;
}

export interface OrderItem extends Term {
  direction: 'asc' | 'desc';
  nulls: 'first' | 'last' | undefined;
}

/** What every plan has: its result, order and paging, and what it reads. */
interface PlanBase {
  outputs: Output[];
  /** The where clause's terms, at row level, ANDed. */
  where: Term[];
  order: OrderItem[];
  /** Whether the query pages: the values are bound from the query at run time. */
  limit: boolean;
  offset: boolean;
  /** The datasources of the datasets it reads, the home's first: more than one, and the statement is federated. */
  datasources: string[];
  reads: Reads;
  columnReferences: ColumnReference[];
}

/** An aggregation query (§6.2 A): the groups' subqueries stitched on the dimensions, then having and order. */
export interface AggregationPlan extends PlanBase {
  kind: 'aggregation';
  dimensions: Dimension[];
  groups: Group[];
  /** Having terms, over the rows at the query's grain. */
  having: Term[];
  /** A having holds a window: it filters a derived table of those rows (§6.10.1). */
  relay: boolean;
}

/** A scalar query (§6.2 B): the home's rows, joined many-to-one. */
export interface ScalarPlan extends PlanBase {
  kind: 'scalar';
  home: PackageDataset;
  joins: Edge[];
}

export type QueryPlan = AggregationPlan | ScalarPlan;

export function addReads(reads: Reads, dataset: PackageDataset, columns: Iterable<string>): void {
  let known = reads.get(dataset);
  if (!known) reads.set(dataset, (known = new Set()));
  for (const column of columns) known.add(column);
}

/** The parts of the plan the joins of a group depend on. */
export interface JoinInputs {
  planner: JoinPlanner;
  reads: Reads;
  groups: readonly Group[];
  dimensions: readonly Dimension[];
  whereNeeds: readonly JoinNeed[];
}

/** The joins of a group of an aggregation query, and the key of its de-duplication where one fans out. */
export function groupJoins(group: Group, context: JoinInputs): GroupJoins {
  const own = group.aggregates.flatMap((aggregate) => aggregate.needs);
  const outer = joinsOf(group, own, context);
  const inner = joinsOf(group, [...context.dimensions.flatMap((dimension) => dimension.field.needs), ...context.whereNeeds], context);
  if (!inner.fansOut || group.aggregates.length === 0) return { outer: outer.edges, inner: inner.edges, key: undefined };
  // Rows of the home repeat along the fan-out: one per (home row, group key) is kept (§6.8.1), by its key.
  const key = group.home.primaryKey.length > 0 ? group.home.primaryKey : group.home.uniqueKeys[0] ?? [];
  if (key.length === 0) {
    const along = inner.edges.filter((edge) => edge.fanOut).map((edge) => edge.relationship.name).join(', ');
    throw queryInvalid('E3012_MN_NO_SAFE_REWRITE', group.home.name, `${group.home.name} has no key (no primary or unique key, and no relationship has it as its to side), so its rows cannot be counted once per group across the one-to-many join along ${along}`);
  }
  addReads(context.reads, group.home, key);
  return { outer: outer.edges, inner: inner.edges, key };
}

/** The joins from a scalar query's home to every dataset, along paths that never repeat the home's rows. */
export function scalarJoins(home: PackageDataset, needs: readonly JoinNeed[], context: JoinInputs): Edge[] {
  const { edges, fansOut } = joinsOf({ alias: 'g0', home, aggregates: [] }, needs, context, true);
  if (fansOut) throw queryInvalid('E_FAN_OUT_IN_SCALAR_QUERY', home.name, `joining from ${home.name} would repeat its rows; ask with dimensions and measures`);
  return edges;
}

/** The joins from a group's home to every dataset it needs, and whether one fans out (rows then repeat). */
function joinsOf(group: Group, needs: Iterable<JoinNeed>, context: JoinInputs, scalar = false): { edges: Edge[]; fansOut: boolean } {
  const { planner, groups } = context;
  const edges: Edge[] = [];
  const joined = new Map<PackageDataset, Edge | null>([[group.home, null]]);
  let fansOut = false;
  for (const dataset of needs) {
    if ('relationship' in dataset) {
      enrich(dataset, joined, edges, context);
      continue;
    }
    const path = planner.path(group.home, dataset);
    if (!path.ok) {
      const stitched = path.code === 'E_NO_PATH' && groups.length > 1 && groups.some((other) => !planner.connected(other.home, group.home));
      // A scalar query has no aggregation to absorb an N:N traversal: its rows would repeat (§6.2 B.5).
      const code = stitched ? 'E3013_NO_STITCHING_DIMENSION' : scalar && path.code === 'E3012_MN_NO_SAFE_REWRITE' ? 'E_FAN_OUT_IN_SCALAR_QUERY' : path.code;
      throw queryInvalid(code, dataset.name, `${path.message} (needed by ${group.aggregates.map((aggregate) => aggregate.label).join(', ') || 'the dimensions'})`);
    }
    for (const edge of path.steps) {
      const known = joined.get(edge.to);
      if (known === undefined) {
        join(edge, joined, edges, context);
        fansOut ||= edge.fanOut;
      } else if (known !== null && known !== edge) {
        throw queryInvalid('E_AMBIGUOUS_PATH', edge.to.name, `${edge.to.name} is reached from ${group.home.name} along two relationships (${known.relationship.name}, ${edge.relationship.name})`);
      }
    }
  }
  return { edges, fansOut };
}

/** Adds `edge` to the joins, and the columns it joins on to those read. */
function join(edge: Edge, joined: Map<PackageDataset, Edge | null>, edges: Edge[], context: JoinInputs): void {
  joined.set(edge.to, edge);
  edges.push(edge);
  addReads(context.reads, edge.from, edge.columns.map(([column]) => column));
  addReads(context.reads, edge.to, edge.columns.map(([, column]) => column));
}

/**
 * An enriched field's join: its target must be the row that edge reaches from the field's row, so it is
 * joined by that edge. Already in the query otherwise (the home, or reached along another path), it may be
 * another row, or a row where the field's dataset has none and the field must be NULL: `E_AMBIGUOUS_PATH`.
 */
function enrich(edge: Edge, joined: Map<PackageDataset, Edge | null>, edges: Edge[], context: JoinInputs): void {
  const known = joined.get(edge.to);
  if (known === undefined) {
    join(edge, joined, edges, context);
    return;
  }
  if (known === edge) return;
  throw queryInvalid('E_AMBIGUOUS_PATH', edge.to.name, `a field of ${edge.from.name} enriches from ${edge.to.name} along ${edge.relationship.name}, and the query has ${edge.to.name} already, ${known === null ? 'as the home of a measure' : `along ${known.relationship.name}`}: the field's value would be read from another row; group by ${edge.to.name}'s own field instead`);
}

/** What the home of an aggregate is found from: the join paths, and the datasets of the dimensions and filters. */
export interface Homes {
  planner: JoinPlanner;
  queryDatasets: PackageDataset[];
}

/** The dataset every other one is reached from along many-to-one paths; without datasets, the query's finest. */
export function homeOf(datasets: readonly PackageDataset[], target: string, { planner, queryDatasets }: Homes): PackageDataset {
  const candidates = datasets.length > 0 ? [...new Set(datasets)] : queryDatasets;
  const reachesAll = (home: PackageDataset) => candidates.every((other) => {
    const path = planner.path(home, other);
    return path.ok && path.steps.every((step) => !step.fanOut);
  });
  const home = candidates.find(reachesAll);
  if (home) return home;
  if (candidates.length === 0) throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field, and the query has no dataset to count`);
  const [first, ...others] = candidates as [PackageDataset, ...PackageDataset[]];
  const apart = others.find((other) => !planner.connected(first, other));
  if (apart) throw queryInvalid('E3013_NO_STITCHING_DIMENSION', target, `${target} reads ${first.name} and ${apart.name}, which no relationship path connects: one aggregate cannot read both`);
  throw queryInvalid('E3012_MN_NO_SAFE_REWRITE', target, `${target} reads ${candidates.map((dataset) => dataset.name).join(' and ')}, and no one of them reaches the others from the many side; aggregate each separately`);
}

/**
 * What `COUNT(*)` counts: the rows of the measure-bearing dataset (Foundation D-016), the home of the query's
 * other aggregates; without other aggregates, the query's finest dataset (dimensions and filters). Beside
 * aggregates of several homes it counts the finest dataset of the query when that is one of them; otherwise
 * nothing says which rows it counts. A model metric's COUNT(*) in a query with no dataset counts its model's fact.
 */
function countedHome(homes: ReadonlySet<PackageDataset>, { label: target, fact }: Aggregate, context: Homes): PackageDataset {
  if (homes.size === 1) return [...homes][0] as PackageDataset;
  if (context.queryDatasets.length === 0) {
    // A model metric's COUNT(*) asked alone counts the rows of its model's fact (Foundation D-016).
    if (fact && homes.size === 0) return fact;
    throw queryInvalid('E_INVALID_QUERY', target, `${target} reads no field, and the query has ${homes.size === 0 ? 'no dataset' : 'several datasets'} it could count: add a dimension or a filter of the dataset to count`);
  }
  const finest = homeOf([], target, context);
  if (homes.size === 0 || homes.has(finest)) return finest;
  throw queryInvalid('E_AMBIGUOUS_MEASURE_GRAIN', target, `${target} reads no field, and the query's other aggregates have several homes (${[...homes].map((home) => home.name).join(', ')}): count a field of the dataset meant, e.g. COUNT(${[...homes][0]?.name}.<key>)`);
}

/** The dataset a query without aggregates lists its dimensions' values from. */
function dimensionHome(context: Homes): PackageDataset {
  try {
    return homeOf([], 'dimensions', context);
  } catch (error) {
    const [first] = context.queryDatasets;
    if (first) return first;
    throw error;
  }
}

/** The aggregates grouped by home, each group a subquery of the statement; `dimensions`: how many the query has. */
export function formGroups(aggregates: readonly Aggregate[], dimensions: number, context: Homes): Group[] {
  const byHome = new Map<PackageDataset, Group>();
  const homes = new Set(aggregates.flatMap((aggregate) => aggregate.home ?? []));
  for (const aggregate of aggregates) {
    const home = aggregate.home ?? countedHome(homes, aggregate, context);
    let group = byHome.get(home);
    if (!group) byHome.set(home, (group = { alias: `g${byHome.size}`, home, aggregates: [] }));
    group.aggregates.push(aggregate);
    aggregate.group = group;
  }
  // Without measures the query lists distinct dimension values: rows repeated by a fan-out change nothing.
  const groups = byHome.size === 0 ? [{ alias: 'g0', home: dimensionHome(context), aggregates: [] }] : [...byHome.values()];
  if (groups.length > 1 && dimensions === 0) {
    const [first, ...others] = groups as [Group, ...Group[]];
    const apart = others.find((group) => !context.planner.connected(first.home, group.home));
    if (apart) {
      throw queryInvalid('E3013_NO_STITCHING_DIMENSION', 'measures', `${first.home.name} and ${apart.home.name} are not related and the query has no dimension: their totals would be a Cartesian product`);
    }
  }
  return groups;
}

/** The datasources the statement reads, the groups' homes' first (docs/federation.md when more than one). */
export function datasourcesOf(reads: Reads, groups: readonly Group[]): string[] {
  const datasources = new Set(groups.map((group) => group.home.relation.datasource));
  for (const dataset of reads.keys()) datasources.add(dataset.relation.datasource);
  return [...datasources];
}

/**
 * A scalar query's home: the dataset of its fields every other one is reached from many-to-one (§5.1.2
 * "whose row-level fields drive the projection"); none is `E_NO_PATH` or `E_FAN_OUT_IN_SCALAR_QUERY`.
 */
export function scalarHome(datasets: readonly PackageDataset[], planner: JoinPlanner): PackageDataset {
  const home = datasets.find((candidate) => datasets.every((other) => {
    const path = planner.path(candidate, other);
    return path.ok && path.steps.every((step) => !step.fanOut);
  }));
  if (home) return home;
  const [first, ...others] = datasets as [PackageDataset, ...PackageDataset[]];
  const apart = others.find((other) => !planner.connected(first, other));
  if (apart) throw queryInvalid('E_NO_PATH', 'fields', `no relationship path connects ${first.name} to ${apart.name}`);
  throw queryInvalid('E_FAN_OUT_IN_SCALAR_QUERY', 'fields', `no one of ${datasets.map((dataset) => dataset.name).join(', ')} reaches the others many-to-one: their rows would repeat; ask with dimensions and measures`);
}
