/**
 * Which written expression the service compiles. An expression is a plain string (the Foundation's form)
 * or OSI 1.0's list of per-dialect variants. The service compiles the Foundation's own dialect
 * (`OSI_SQL_2026`, also spelt `Ossie_SQL_2026`) when a variant is in it, else the `ANSI_SQL` one, else the
 * first variant in another SQL dialect (`DATABRICKS`, `SNOWFLAKE`, `BIGQUERY`): a fixed preference, so a
 * model written in several dialects always means the same (expression_language.md, "Dialect Extensions").
 * A vendor's variant is read in the Foundation's expression language: accepted when it is written in it
 * (most converter output is plain SQL), refused naming the construct otherwise. Variants in languages
 * that are not SQL (MDX, DAX, TABLEAU, MAQL) are kept in the document and ignored.
 */
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import { writeModelExpression } from '../semantic-query/model-expressions.js';
import type { DocumentPath } from './located-document.js';
import type { OsiDialect, OsiDocument, OsiExpression } from './module-schemas.js';

/**
 * How a chosen text is compiled: `osi` in the Foundation's expression language, `ansi` as the datasource's
 * own SQL, `vendor` (another SQL dialect) in the Foundation's language with no fallback to the datasource's.
 */
export type CompiledDialect = 'osi' | 'ansi' | 'vendor';

export interface ChosenExpression {
  text: string;
  dialect: CompiledDialect;
  /** The dialect as the document names it, for messages. */
  label: string;
  /** Where the text sits in its document. */
  path: DocumentPath;
}

/** Dialects of OSI's list that are not SQL: no variant in them is compiled. */
const NOT_SQL: ReadonlySet<OsiDialect> = new Set(['MDX', 'DAX', 'TABLEAU', 'MAQL']);

function compiledDialect(dialect: OsiDialect): CompiledDialect | undefined {
  if (dialect === 'OSI_SQL_2026' || dialect === 'Ossie_SQL_2026') return 'osi';
  if (dialect === 'ANSI_SQL') return 'ansi';
  return NOT_SQL.has(dialect) ? undefined : 'vendor';
}

const PREFERENCE: readonly CompiledDialect[] = ['osi', 'ansi', 'vendor'];

/**
 * The variant to compile of the expression of the element at `path`, or undefined when none is in SQL. A
 * plain string is in the model's `dialect`, by default the Foundation's (expression_language.md, "Changes
 * to YAML"); a variant without `dialect` is in the model's `dialect`, by default ANSI_SQL, as OSI 1.0 says
 * and as modules written for it mean.
 */
export function chosenExpression(expression: OsiExpression, modelDialect: OsiDialect | undefined, path: DocumentPath): ChosenExpression | undefined {
  if (typeof expression === 'string') {
    const label = modelDialect ?? 'OSI_SQL_2026';
    const dialect = compiledDialect(label);
    return dialect ? { text: expression, dialect, label, path: [...path, 'expression'] } : undefined;
  }
  // fillVariantDialects has written every variant's dialect by now; the default is repeated for the type.
  const variants = expression.dialects.map((variant, index) => {
    const label = variant.dialect ?? modelDialect ?? 'ANSI_SQL';
    return { variant, index, label, dialect: compiledDialect(label) };
  });
  for (const preferred of PREFERENCE) {
    const chosen = variants.find((entry) => entry.dialect === preferred);
    if (chosen) return { text: chosen.variant.expression, dialect: preferred, label: chosen.label, path: [...path, 'expression', 'dialects', chosen.index, 'expression'] };
  }
  return undefined;
}

/** The dialects an expression is written in, for a message. */
export function dialectsOf(expression: OsiExpression): string {
  return typeof expression === 'string' ? 'its model\'s dialect' : [...new Set(expression.dialects.map((variant) => variant.dialect ?? 'ANSI_SQL'))].join(', ');
}

/** Why a construct is refused: the Foundation's language lacks it (a vendor's text is read in that language). */
export function outsideSubset(label: string | undefined, construct: string): string {
  return label === undefined || label === 'OSI_SQL_2026' || label === 'Ossie_SQL_2026'
    ? `OSI_SQL_2026 does not have ${construct}`
    : `the service reads ${label} expressions in OSI_SQL_2026, which does not have ${construct}`;
}

/**
 * Writes the dialect of every per-dialect variant that leaves it out (the model's `dialect`, else ANSI_SQL)
 * into the document, before its content digest is taken: a variant means the same with or without
 * `dialect: ANSI_SQL` written, so both give the same digest (as they did when the schema filled it in).
 */
export function fillVariantDialects(document: OsiDocument): void {
  for (const model of document.semantic_model) {
    const expressions = [
      ...model.datasets.flatMap((dataset) => (dataset.fields ?? []).map((field) => field.expression)),
      ...(model.metrics ?? []).map((metric) => metric.expression),
    ];
    for (const expression of expressions) {
      if (typeof expression === 'string') continue;
      for (const variant of expression.dialects) variant.dialect ??= model.dialect ?? 'ANSI_SQL';
    }
  }
}

/** The SQL a chosen expression compiles to, or why it has none (a diagnostic code of `compile`). */
export type ExpressionSql =
  | { ok: true; sql: string; translated: boolean }
  | { ok: false; code: 'compile.function_unavailable' | 'compile.nested_aggregate' | 'compile.deferred_frame_mode' | 'compile.expression_invalid' | 'compile.expression_outside_subset'; message: string };

/** A name or `dataset.name`: the same text in every dialect, left as written (and cheap to analyse). */
const PLAIN_NAME = /^\s*[A-Za-z_][A-Za-z0-9_$]*(?:\.[A-Za-z_][A-Za-z0-9_$]*)*\s*$/;

const WRITING_FAILURES = {
  E_FUNCTION_NOT_ALLOWED: 'compile.function_unavailable',
  E_NESTED_AGGREGATION_DEFERRED: 'compile.nested_aggregate',
  E_DEFERRED_FRAME_MODE: 'compile.deferred_frame_mode',
} as const;

/**
 * An `OSI_SQL_2026` expression is the Foundation's, dialect-neutral: it is parsed by the expression
 * language's grammar and written in the datasource's dialect (NULL ordering, concatenation, the
 * conditional and date functions), so the datasource's grammar then reads SQL its server runs. A construct
 * that grammar does not read (`TRY_CAST`, `SUBSTRING(x FROM 1)`) is left as written (`translated: false`),
 * as before the translation. An `ANSI_SQL` variant is the datasource's own SQL, as written.
 */
export function expressionSql(chosen: { text: string; dialect: CompiledDialect; label?: string }, dialect: ExpressionDialect, target: string): ExpressionSql {
  if (chosen.dialect === 'ansi' || PLAIN_NAME.test(chosen.text)) return { ok: true, sql: chosen.text, translated: false };
  const written = writeModelExpression(chosen.text, dialect, target);
  if (written.ok) return { ok: true, sql: written.sql, translated: true };
  if (!written.parsed && written.osiCode === 'E_INVALID_EXPRESSION') {
    if (chosen.dialect === 'osi') return { ok: true, sql: chosen.text, translated: false };
    // A vendor's SQL is compiled only as far as the Foundation's language reads it: its own constructs mean what that vendor says.
    return { ok: false, code: 'compile.expression_outside_subset', message: `${chosen.label ?? 'vendor'} expression ${chosen.text}: the service reads it in the OSI expression language, which does not read it: ${written.message}` };
  }
  const code = WRITING_FAILURES[written.osiCode as keyof typeof WRITING_FAILURES] ?? 'compile.expression_invalid';
  return { ok: false, code, message: written.message };
}
