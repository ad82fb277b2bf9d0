/**
 * A model's field or metric expression in the Foundation's language (`OSI_SQL_2026`), written as SQL of its
 * datasource's dialect. The Foundation's expressions are dialect-neutral (expression_language.md): they are
 * parsed by the same grammar as a query's expressions and written anew, as a query's are, so what a server
 * lacks (`NULLS LAST` on MySQL, `||` that MySQL reads as OR, `IFF`, `YEAR`, …) is written in its own form.
 * Names are written quoted, as parsed; literals are written into the text, since the model is the
 * service's own configuration, not a caller's input.
 */
import { InputError } from '../plugin-api/errors.js';
import { parseExpression } from './expression-parser.js';
import type { OsiCode } from './query-errors.js';
import { SqlWriter, writeExpression, type WriterDialect } from './sql-writer.js';

export type WrittenModelExpression =
  | { ok: true; sql: string }
  /** `parsed` is false when the Foundation's grammar refused the text itself (a construct outside its subset). */
  | { ok: false; osiCode: OsiCode; message: string; parsed: boolean };

export function writeModelExpression(text: string, dialect: WriterDialect, target: string): WrittenModelExpression {
  let parsed = false;
  try {
    const expression = parseExpression(text, target);
    parsed = true;
    // A field that aggregates is written too: the datasource's grammar then reports it (E_AGGREGATE_IN_FIELD).
    return { ok: true, sql: writeExpression(expression, new SqlWriter(dialect, new Map(), true), target) };
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return { ok: false, osiCode: (error.details?.['osiCode'] as OsiCode | undefined) ?? 'E_INVALID_EXPRESSION', message: error.message, parsed };
  }
}
