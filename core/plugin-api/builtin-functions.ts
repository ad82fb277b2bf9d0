/**
 * Which functions are a server's built-ins and which of them a statement may not call. Built-ins are
 * allowed by default (count, lower, date_trunc...); the refused ones reach outside the VDB: server files,
 * other databases, SQL given as text, server or session administration, sleeping and locking. A deny-list
 * cannot be complete: the database role the service connects as is the last line (docs/authorization.md).
 */

/** Built-ins refused for one reason. */
export interface RefusedFunctions {
  /** Ends the denial `function <name> <why>, which is not allowed`, e.g. `reads server files`. */
  why: string;
  /** Lower-case names refused as they are, e.g. `load_file`. */
  names?: readonly string[];
  /** Lower-case prefixes: every name that starts with one is refused, e.g. `pg_read_`. */
  prefixes?: readonly string[];
}

export interface FunctionPolicy {
  /** Schemas whose functions are built-ins, as the grammar spells them (already folded), e.g. `pg_catalog`. */
  builtinSchemas: readonly string[];
  /** Built-ins a statement may not call; names compare in lower case. */
  refused: readonly RefusedFunctions[];
  /**
   * Set where the server calls a function named without parentheses (Oracle: `secret_fn`, `pkg.fn`): the
   * bare names, after case folding, that are allowed built-ins or pseudo-columns (`SYSDATE`, `ROWNUM`). Any
   * other name that is no column of a relation of the statement is then refused as a call.
   */
  bareBuiltins?: ReadonlySet<string>;
}

/** No built-in refused, none called without parentheses: the default of a dialect that states none. */
export const NO_REFUSED_FUNCTIONS: FunctionPolicy = { builtinSchemas: [], refused: [] };
