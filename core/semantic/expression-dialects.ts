/**
 * Which written expression the service compiles. An expression is a plain string (the Foundation's form)
 * or OSI 1.0's list of per-dialect variants. The service compiles the Foundation's own dialect
 * (`OSI_SQL_2026`, also spelt `Ossie_SQL_2026`) when a variant is in it, else the `ANSI_SQL` one: a fixed
 * preference, so a model written in two dialects always means the same (expression_language.md, "Dialect
 * Extensions"). Other dialects are kept in the document and ignored.
 */
import type { ExpressionDialect } from '../plugin-api/semantic-provider.js';
import { writeModelExpression } from '../semantic-query/model-expressions.js';
import type { DocumentPath } from './located-document.js';
import type { OsiDialect, OsiDocument, OsiExpression } from './module-schemas.js';

/** The two dialects the service compiles; `osi` is validated against the Foundation's expression subset. */
export type CompiledDialect = 'osi' | 'ansi';

export interface ChosenExpression {
  text: string;
  dialect: CompiledDialect;
  /** Where the text sits in its document. */
  path: DocumentPath;
}

function compiledDialect(dialect: OsiDialect): CompiledDialect | undefined {
  if (dialect === 'OSI_SQL_2026' || dialect === 'Ossie_SQL_2026') return 'osi';
  return dialect === 'ANSI_SQL' ? 'ansi' : undefined;
}

/**
 * The variant to compile of the expression of the element at `path`, or undefined when none is in a
 * dialect the service compiles. A plain string is in the model's `dialect`, by default the Foundation's
 * (expression_language.md, "Changes to YAML"); a variant without `dialect` is in the model's `dialect`, by
 * default ANSI_SQL, as OSI 1.0 says and as modules written for it mean.
 */
export function chosenExpression(expression: OsiExpression, modelDialect: OsiDialect | undefined, path: DocumentPath): ChosenExpression | undefined {
  if (typeof expression === 'string') {
    const dialect = compiledDialect(modelDialect ?? 'OSI_SQL_2026');
    return dialect ? { text: expression, dialect, path: [...path, 'expression'] } : undefined;
  }
  // fillVariantDialects has written every variant's dialect by now; the default is repeated for the type.
  const variants = expression.dialects.map((variant, index) => ({ variant, index, dialect: compiledDialect(variant.dialect ?? modelDialect ?? 'ANSI_SQL') }));
  const chosen = variants.find((entry) => entry.dialect === 'osi') ?? variants.find((entry) => entry.dialect === 'ansi');
  if (!chosen?.dialect) return undefined;
  return { text: chosen.variant.expression, dialect: chosen.dialect, path: [...path, 'expression', 'dialects', chosen.index, 'expression'] };
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
  | { ok: false; code: 'compile.function_unavailable' | 'compile.nested_aggregate' | 'compile.deferred_frame_mode' | 'compile.expression_invalid'; message: string };

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
export function expressionSql(chosen: { text: string; dialect: CompiledDialect }, dialect: ExpressionDialect, target: string): ExpressionSql {
  if (chosen.dialect === 'ansi' || PLAIN_NAME.test(chosen.text)) return { ok: true, sql: chosen.text, translated: false };
  const written = writeModelExpression(chosen.text, dialect, target);
  if (written.ok) return { ok: true, sql: written.sql, translated: true };
  if (!written.parsed && written.osiCode === 'E_INVALID_EXPRESSION') return { ok: true, sql: chosen.text, translated: false };
  const code = WRITING_FAILURES[written.osiCode as keyof typeof WRITING_FAILURES] ?? 'compile.expression_invalid';
  return { ok: false, code, message: written.message };
}
