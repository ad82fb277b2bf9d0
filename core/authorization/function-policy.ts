/**
 * Applies a dialect's function policy (its built-in schemas, allowed built-ins and bare-name calls) to the
 * function uses and unknown names of a statement.
 */
import type { SqlDialect } from '../plugin-api/sql-dialect.js';

type PolicyDialect = Pick<SqlDialect, 'functionPolicy' | 'foldIdentifier' | 'caseInsensitiveNames'>;

/**
 * What a name that is no column of a relation of the statement can be: a column of a derived table (or an
 * error), an allowed built-in, or, where the server calls functions without parentheses, a call.
 */
export function bareNameKind(dialect: PolicyDialect, name: string): 'column' | 'builtin' | 'call' {
  const builtins = dialect.functionPolicy.bareBuiltins;
  if (!builtins) return 'column';
  return builtins.has(dialect.foldIdentifier(name)) ? 'builtin' : 'call';
}

export function isBuiltinSchema(dialect: PolicyDialect, schema: string): boolean {
  return dialect.functionPolicy.builtinSchemas.includes(schema);
}

/**
 * Whether the built-in `name` (as the grammar folded it) may be called: it is on the dialect's allow-list or
 * among the VDB's `allowFunctions`, which are written as unquoted names and folded as the server folds them.
 */
export function isAllowedBuiltin(dialect: PolicyDialect, name: string, allowFunctions: readonly string[]): boolean {
  const key = dialect.caseInsensitiveNames ? name.toLowerCase() : name;
  if (dialect.functionPolicy.allowed.has(key)) return true;
  return allowFunctions.some((extra) => (dialect.caseInsensitiveNames ? extra.toLowerCase() : dialect.foldIdentifier(extra)) === key);
}
