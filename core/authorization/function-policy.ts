/**
 * Applies a dialect's function policy (its built-in schemas, refused built-ins and bare-name calls) to the
 * function uses and unknown names of a statement.
 */
import type { SqlDialect } from '../plugin-api/sql-dialect.js';

type PolicyDialect = Pick<SqlDialect, 'functionPolicy' | 'foldIdentifier'>;

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

/** Why the built-in function `name` is refused, or undefined when it may be called. */
export function refusedBuiltin(dialect: PolicyDialect, name: string): string | undefined {
  const lower = name.toLowerCase();
  const rule = dialect.functionPolicy.refused.find((candidate) =>
    (candidate.names?.includes(lower) ?? false) || (candidate.prefixes?.some((prefix) => lower.startsWith(prefix)) ?? false));
  return rule?.why;
}
