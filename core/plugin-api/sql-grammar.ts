/**
 * A SQL grammar: the parser of a dialect, behind what the core asks of it. The authorizer asks for the facts
 * of a statement, semantic models for the analysis of an expression. A dialect builds its grammar from one
 * of the core's (`libpgQueryGrammar`, `nodeSqlParserGrammar`) with its own parameters.
 */
import type { Denial } from './denial.js';
import type { StatementFacts } from './statement-facts.js';

/** A column reference as written: `total`, `orders.total`; offsets are string indexes in the expression. */
export interface ColumnReference {
  /** The dotted parts, as the grammar reads them (PostgreSQL: unquoted ones folded). */
  parts: string[];
  /** Where the reference starts in the expression's text. */
  start: number;
  /** Where it ends, exclusive. */
  end: number;
}

/** What a grammar found in one SQL expression of a semantic model. */
export interface ExpressionAnalysis {
  /** Every column reference, with its span, so compilation can qualify it. */
  references: ColumnReference[];
  /** True when the expression calls an aggregate: then it is a metric's, not a field's. */
  hasAggregate: boolean;
  /** True when the whole expression is one column reference. */
  plainColumn: boolean;
}

/** An analysis, or why the text is no plain expression (it becomes a diagnostic). */
export type AnalysisOutcome = { ok: true; analysis: ExpressionAnalysis } | { ok: false; message: string };

/** The parser of a dialect's SQL: statement facts for the authorizer, expression analysis for semantic models. */
export interface SqlGrammar {
  /** Names the grammar in messages (`it does not parse as <label>`), e.g. `PostgreSQL` or `T-SQL`. */
  readonly label: string;
  /** Loads the parser (a WASM module, a grammar file) once; the methods below need it loaded. */
  load(): Promise<void>;
  /**
   * What one statement reads and writes, from knex.raw text (`?` per bound value), or why it cannot be
   * authorized: text the grammar cannot read as the server would is refused, never guessed at.
   */
  statementFacts(sql: string): StatementFacts | Denial;
  /**
   * Analyses a field or metric expression, parsed as `SELECT <expression>`: one plain expression, no alias,
   * FROM, subquery or parameter. `aggregates` holds lower-case names whose call aggregates; a call with
   * OVER is a window function, not an aggregate (its arguments may still aggregate).
   */
  analyzeExpression(text: string, aggregates: ReadonlySet<string>): AnalysisOutcome;
  /**
   * Optional shortcut: the texts that are a bare column name, analysed in one pass. Most fields are a
   * column name, and one scan of all of them costs less than a parse of each; the rest go to `analyzeExpression`.
   */
  plainColumns?(texts: readonly string[]): Map<string, ExpressionAnalysis>;
}
