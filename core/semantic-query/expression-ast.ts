/**
 * A caller's expression as the compiler holds it: a small tree of the OSI expression subset. As parsed, names
 * are not yet resolved (`name`); resolved (`Expr<Reference>`, query-plan.ts), each name is a `ref` to what it
 * means (a field, a column, a dimension, an aggregate). Literals are values, bound when the SQL is written,
 * never text; an `inline` one (a model's own) is written into the text.
 */
import type { CastType, DatePart, DateUnit, PortableCall, TimeGrain } from '../plugin-api/semantic-query-syntax.js';

export type Literal = string | number | boolean | null;

export interface WindowSpec<R = never> {
  partitionBy: Expr<R>[];
  orderBy: { expression: Expr<R>; direction: 'asc' | 'desc'; nulls: 'first' | 'last' | undefined }[];
  /** An explicit frame; undefined: SQL's default frame. */
  frame?: WindowFrame;
}

/** `ROWS`/`RANGE` with literal integer offsets (OSI Foundation §6.10.6): a number, never text of the caller. */
export interface WindowFrame {
  mode: 'ROWS' | 'RANGE';
  start: FrameBound;
  /** Undefined: the short form (`ROWS 2 PRECEDING`), which ends at the current row. */
  end: FrameBound | undefined;
}

export type FrameBound =
  | { kind: 'UNBOUNDED PRECEDING' | 'UNBOUNDED FOLLOWING' | 'CURRENT ROW' }
  | { kind: 'PRECEDING' | 'FOLLOWING'; offset: number };

export type Expr<R = never> =
  | { kind: 'name'; parts: string[] }
  /** `digits`: a number's text as parsed (a decimal or a large number, which a double would round). */
  | { kind: 'literal'; value: Literal; digits?: string; inline?: boolean }
  | { kind: 'unary'; operator: '-' | '+' | 'NOT'; operand: Expr<R> }
  | { kind: 'binary'; operator: string; left: Expr<R>; right: Expr<R> }
  | { kind: 'logical'; operator: 'AND' | 'OR'; operands: Expr<R>[] }
  | { kind: 'in'; operand: Expr<R>; list: Expr<R>[]; negated: boolean }
  | { kind: 'between'; operand: Expr<R>; low: Expr<R>; high: Expr<R>; negated: boolean }
  | { kind: 'like'; operand: Expr<R>; pattern: Expr<R>; negated: boolean; caseInsensitive: boolean; literal?: boolean }
  | { kind: 'isNull'; operand: Expr<R>; negated: boolean }
  | { kind: 'distinctFrom'; left: Expr<R>; right: Expr<R>; negated: boolean }
  | { kind: 'call'; name: string; args: Expr<R>[]; star: boolean; distinct: boolean; window: WindowSpec<R> | undefined }
  | { kind: 'case'; operand: Expr<R> | undefined; branches: { when: Expr<R>; then: Expr<R> }[]; otherwise: Expr<R> | undefined }
  | { kind: 'cast'; operand: Expr<R>; type: CastType; modifiers: number[] }
  | { kind: 'keyword'; word: 'CURRENT_DATE' | 'CURRENT_TIMESTAMP' }
  /** `YEAR(x)`, `EXTRACT(YEAR FROM x)`, `DATE_PART('year', x)`: written by the dialect. */
  | { kind: 'datePart'; part: DatePart; operand: Expr<R> }
  /** The 1-based position of `needle` in `haystack`, 0 when absent (`POSITION`, `CHARINDEX`): written by the dialect. */
  | { kind: 'position'; needle: Expr<R>; haystack: Expr<R>; reversed: boolean }
  /** `DATE_TRUNC('month', x)` to a grain of the dimensions: written as the grains are. */
  | { kind: 'truncate'; grain: TimeGrain; operand: Expr<R> }
  /** `DATEADD`, `DATEDIFF`, `SPLIT_PART`, `REGEXP_…`: written by the dialect, or refused where it has no form. */
  | { kind: 'portable'; name: PortableCall['name']; unit: DateUnit | undefined; args: Expr<R>[] }
  /** A resolved name: what it means, written by the writer (never in a caller's expression as parsed). */
  | { kind: 'ref'; ref: R };

/** Every sub-expression, depth first, the node itself first. */
export function* nodesOf<R>(expression: Expr<R>): Generator<Expr<R>> {
  yield expression;
  for (const child of childrenOf(expression)) yield* nodesOf(child);
}

export function childrenOf<R>(expression: Expr<R>): Expr<R>[] {
  switch (expression.kind) {
    case 'name': case 'literal': case 'keyword': case 'ref': return [];
    case 'unary': return [expression.operand];
    case 'binary': case 'distinctFrom': return [expression.left, expression.right];
    case 'logical': return expression.operands;
    case 'in': return [expression.operand, ...expression.list];
    case 'between': return [expression.operand, expression.low, expression.high];
    case 'like': return [expression.operand, expression.pattern];
    case 'isNull': case 'cast': case 'datePart': case 'truncate': return [expression.operand];
    case 'position': return [expression.needle, expression.haystack];
    case 'portable': return expression.args;
    case 'call': return [...expression.args, ...(expression.window ? [...expression.window.partitionBy, ...expression.window.orderBy.map((term) => term.expression)] : [])];
    case 'case': return [
      ...(expression.operand ? [expression.operand] : []),
      ...expression.branches.flatMap((branch) => [branch.when, branch.then]),
      ...(expression.otherwise ? [expression.otherwise] : []),
    ];
  }
}

/** Aggregates the compiler knows (the OSI expression language's required ones that SQL servers share). */
export const AGGREGATES: ReadonlySet<string> = new Set([
  'sum', 'count', 'avg', 'min', 'max', 'stddev', 'stddev_pop', 'stddev_samp', 'variance', 'var_pop', 'var_samp', 'median', 'any_value',
  'percentile_cont', 'percentile_disc',
]);
/** Functions that exist only over a window. */
export const WINDOW_FUNCTIONS: ReadonlySet<string> = new Set([
  'row_number', 'rank', 'dense_rank', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value', 'percent_rank', 'cume_dist',
]);

/** An aggregate call (not over a window). */
export function isAggregateCall<R>(expression: Expr<R>): boolean {
  return expression.kind === 'call' && expression.window === undefined && AGGREGATES.has(expression.name);
}
