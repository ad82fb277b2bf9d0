/**
 * SQL reaches a datasource through knex.raw: every `?` is a bound value (inside quotes too, as knex reads
 * it), `\?` a literal question mark, and `??` an identifier taken from a bound value. The parsers are given
 * the text as the server receives it, with the family's own placeholders, so `?` never fails a parse.
 */
import type { SqlFamily } from '../plugin-api/sql-dialect.js';
import { deny, type Denial } from './denial.js';

/** What knex turns the n-th `?` (1-based) into, in a form the family's parser reads. */
const PLACEHOLDER: Readonly<Record<SqlFamily, ((n: number) => string) | undefined>> = {
  postgres: (n) => `$${n}`,
  mssql: (n) => `@p${n - 1}`,
  // knex sends `:1`; the DB2 grammar used for Oracle reads named binds only, which mean the same here.
  oracle: (n) => `:p${n}`,
  // MySQL takes `?` as it is.
  mysql: undefined,
};

export function withServerPlaceholders(sql: string, family: SqlFamily): string | Denial {
  // An identifier chosen by a bound value is text the authorizer cannot see.
  if (sql.includes('??')) return deny('unparseable', 'the statement takes an identifier from a bound value (`??`), which cannot be authorized');
  const placeholder = PLACEHOLDER[family];
  if (!placeholder) return sql;
  let count = 0;
  // Oracle's knex client has no `\?` escape; SQL Server's and PostgreSQL's do.
  const pattern = family === 'oracle' ? /\?/g : /\\?\?/g;
  return sql.replace(pattern, (match) => (match === '\\?' ? '?' : placeholder(++count)));
}
