/** What both grammars share when they analyse an expression: how it is parsed, and how a refusal leaves the walk. */

/** An expression is parsed as the one target of a SELECT without clauses. */
export const EXPRESSION_PREFIX = 'SELECT ';

/** The expression is no plain expression: thrown by a walk, turned into an outcome by its analysis. */
export class RejectedExpression extends Error {}
