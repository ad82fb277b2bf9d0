/**
 * A caller's expression as the compiler holds it: a small tree of the OSI expression subset. Names are not
 * yet resolved (`name`); literals are values, bound when the SQL is written, never text.
 */
export type Literal = string | number | boolean | null;

export interface WindowSpec {
  partitionBy: Expr[];
  orderBy: { expression: Expr; direction: 'asc' | 'desc'; nulls: 'first' | 'last' | undefined }[];
}

export type Expr =
  | { kind: 'name'; parts: string[] }
  | { kind: 'literal'; value: Literal }
  | { kind: 'unary'; operator: '-' | '+' | 'NOT'; operand: Expr }
  | { kind: 'binary'; operator: string; left: Expr; right: Expr }
  | { kind: 'logical'; operator: 'AND' | 'OR'; operands: Expr[] }
  | { kind: 'in'; operand: Expr; list: Expr[]; negated: boolean }
  | { kind: 'between'; operand: Expr; low: Expr; high: Expr; negated: boolean }
  | { kind: 'like'; operand: Expr; pattern: Expr; negated: boolean; caseInsensitive: boolean }
  | { kind: 'isNull'; operand: Expr; negated: boolean }
  | { kind: 'distinctFrom'; left: Expr; right: Expr; negated: boolean }
  | { kind: 'call'; name: string; args: Expr[]; star: boolean; distinct: boolean; window: WindowSpec | undefined }
  | { kind: 'case'; operand: Expr | undefined; branches: { when: Expr; then: Expr }[]; otherwise: Expr | undefined }
  | { kind: 'cast'; operand: Expr; type: string }
  | { kind: 'keyword'; word: 'CURRENT_DATE' | 'CURRENT_TIMESTAMP' };

/** Every sub-expression, depth first, the node itself first. */
export function* nodesOf(expression: Expr): Generator<Expr> {
  yield expression;
  for (const child of childrenOf(expression)) yield* nodesOf(child);
}

export function childrenOf(expression: Expr): Expr[] {
  switch (expression.kind) {
    case 'name': case 'literal': case 'keyword': return [];
    case 'unary': return [expression.operand];
    case 'binary': case 'distinctFrom': return [expression.left, expression.right];
    case 'logical': return expression.operands;
    case 'in': return [expression.operand, ...expression.list];
    case 'between': return [expression.operand, expression.low, expression.high];
    case 'like': return [expression.operand, expression.pattern];
    case 'isNull': case 'cast': return [expression.operand];
    case 'call': return [...expression.args, ...(expression.window ? [...expression.window.partitionBy, ...expression.window.orderBy.map((term) => term.expression)] : [])];
    case 'case': return [
      ...(expression.operand ? [expression.operand] : []),
      ...expression.branches.flatMap((branch) => [branch.when, branch.then]),
      ...(expression.otherwise ? [expression.otherwise] : []),
    ];
  }
}
