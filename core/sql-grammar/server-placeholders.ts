/**
 * SQL reaches a datasource through knex.raw: every `?` is a bound value (inside quotes too, as knex reads
 * it), `\?` a literal question mark where the knex client has that escape, and `??` an identifier taken from
 * a bound value. The parsers are given the text as the server receives it, with its own placeholders, so
 * `?` never fails a parse.
 */
import { deny, type Denial } from '../plugin-api/denial.js';
import type { PlaceholderStyle } from '../plugin-api/sql-syntax.js';

/** The text with each bound value written in the style's numbered form; unchanged where the server reads `?`. */
export function withServerPlaceholders(sql: string, style: PlaceholderStyle): string | Denial {
  const { numbered } = style;
  // An identifier chosen by a bound value is text the authorizer cannot see.
  if (sql.includes('??')) return deny('unparseable', 'the statement takes an identifier from a bound value (`??`), which cannot be authorized');
  if (!numbered) return sql;
  let count = 0;
  const pattern = style.escapedQuestionMark ? /\\?\?/g : /\?/g;
  return sql.replace(pattern, (match) => (match === '\\?' ? '?' : numbered(++count)));
}
