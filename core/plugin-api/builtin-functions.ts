/**
 * Which built-in functions of a server a statement may call: an allow-list per dialect, of what analysts
 * use (aggregates, math, strings, dates, JSON, arrays, windows, conversions, conditionals). Anything else is
 * refused, so a built-in nobody thought of (one that reads files, settings or sessions, or changes them)
 * stays out by default. The database role the statement runs as is the second gate (docs/authorization.md).
 */

/** The built-in functions a dialect's statements may call, and where they live. */
export interface FunctionPolicy {
  /**
   * Schemas that hold the built-ins, as the grammar spells them (already folded), e.g. `pg_catalog`: a call
   * qualified with one is checked against `allowed` like an unqualified call.
   */
  builtinSchemas: readonly string[];
  /**
   * The built-ins a statement may call, in lower case; a VDB widens it with `allowFunctions`. Names compare
   * in lower case where the dialect's names are case-insensitive, exactly otherwise.
   */
  allowed: ReadonlySet<string>;
  /**
   * Set where the server calls a function named without parentheses (Oracle: `secret_fn`, `pkg.fn`): the
   * bare names, after case folding, that are allowed built-ins or pseudo-columns (`SYSDATE`, `ROWNUM`). Any
   * other name that is no column of a relation of the statement is then refused as a call.
   */
  bareBuiltins?: ReadonlySet<string>;
}

/** No built-in allowed, none called without parentheses: the default of a dialect that states none. */
export const NO_BUILTIN_FUNCTIONS: FunctionPolicy = { builtinSchemas: [], allowed: new Set() };

/**
 * One allow-list from names grouped by topic (`{ aggregates: [...], math: [...] }`), lower-cased: adapters
 * keep their lists readable and reviewable per topic.
 */
export function allowList(groups: Readonly<Record<string, readonly string[]>>): ReadonlySet<string> {
  return new Set(Object.values(groups).flat().map((name) => name.toLowerCase()));
}
