/**
 * PostgreSQL clients number their parameters (`$1`); the core runs statements through knex.raw, which reads
 * one `?` per bound value. A statement's text is rewritten once, when it is prepared: each `$n` in code
 * becomes `?` and the order of the values is kept, so `$2 … $1 … $2` binds the values [2, 1, 2].
 */
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import { scanSql, UnsupportedSqlConstruct } from '../endpoints/sql-quoting-scanner.js';
import { WireError } from './wire-errors.js';

export interface PositionalText {
  /** The text with `?` per bound value, a literal `?` escaped where the knex client can (`\?`). */
  sql: string;
  /** For each `?`, the 0-based index of the client's parameter it takes. */
  order: number[];
  /** How many parameters the client numbered: the highest `$n`. */
  parameterCount: number;
}

const NUMBERED = /\$(\d+)/g;

/** Rewrites `$n` to `?` in the dialect's code regions (not in strings, quoted names or comments). */
export function positionalText(text: string, dialect: SqlDialect): PositionalText {
  let regions;
  try {
    regions = scanSql(text, dialect.lexicon);
  } catch (error) {
    if (error instanceof UnsupportedSqlConstruct) throw new WireError('0A000', `the statement uses a construct the SQL front door does not read: ${error.message}`);
    throw error;
  }
  const order: number[] = [];
  let parameterCount = 0;
  const parts = regions.map(({ kind, start, end }) => {
    const part = escapeQuestionMarks(text.slice(start, end), dialect);
    if (kind !== 'code') return part;
    return part.replace(NUMBERED, (match, digits: string, offset: number) => {
      // `a$1` is an identifier in PostgreSQL, not a parameter
      if (offset > 0 && /[A-Za-z0-9_$]/.test(part[offset - 1] as string)) return match;
      const index = Number(digits);
      if (index < 1 || index > 65_535) throw new WireError('42P02', `there is no parameter $${digits}`);
      order.push(index - 1);
      parameterCount = Math.max(parameterCount, index);
      return '?';
    });
  });
  return { sql: parts.join(''), order, parameterCount };
}

/** knex.raw reads every `?`, inside quotes too: a literal one is escaped, or refused where the client has no escape. */
function escapeQuestionMarks(part: string, dialect: SqlDialect): string {
  if (!part.includes('?')) return part;
  if (!dialect.placeholders.escapedQuestionMark) {
    throw new WireError('0A000', `a literal "?" cannot be sent to a ${dialect.family} datasource through the SQL front door`);
  }
  return part.replaceAll('?', '\\?');
}
