/**
 * Text the node-sql-parser grammars read differently from the database server. Where the parser would see
 * less than the server runs (a comment the server executes, a string the server ends earlier), the
 * statement is refused before parsing: fail closed. PostgreSQL needs none of this: libpg-query is the
 * server's own lexer.
 */
import type { SqlFamily } from '../plugin-api/sql-dialect.js';

/** Why the text cannot be authorized in this family, or undefined when it can be parsed safely. */
export function textHazard(sql: string, family: Exclude<SqlFamily, 'postgres'>): string | undefined {
  // MySQL reads `\'` as an escaped quote unless NO_BACKSLASH_ESCAPES; the T-SQL grammar of the parser reads
  // it as an escape where SQL Server does not. Values are bound parameters, so literals rarely need one.
  if (sql.includes('\\')) return 'a backslash, whose meaning in strings depends on the server; bind the value as a parameter';
  switch (family) {
    case 'mysql':
      // `/*! … */` and `/*M! … */` run as SQL on MySQL and MariaDB; hints can change session settings.
      if (/\/\*(M?!|\+)/.test(sql)) return 'a MySQL executable comment or optimizer hint';
      // MySQL starts a comment at `--` only when whitespace follows; `--x` is minus minus x.
      if (/--(?![ \t\r\n])/.test(sql)) return '`--` without a following space, which MySQL does not read as a comment';
      return undefined;
    case 'mssql':
      return hasNestedBlockComment(sql) ? 'a nested block comment, which SQL Server ends later than the parser' : undefined;
    case 'oracle':
      // Unquoted names fold to upper case, which is how they are matched; a quoted name that is not upper
      // case would name another object.
      return (sql.match(/"[^"]*"/g) ?? []).some((quoted) => quoted !== quoted.toUpperCase())
        ? 'a quoted identifier that is not upper case'
        : undefined;
  }
}

function hasNestedBlockComment(sql: string): boolean {
  for (let open = sql.indexOf('/*'); open !== -1; open = sql.indexOf('/*', open + 2)) {
    const close = sql.indexOf('*/', open + 2);
    if (close === -1) return false;
    if (sql.slice(open + 2, close).includes('/*')) return true;
    open = close;
  }
  return false;
}
