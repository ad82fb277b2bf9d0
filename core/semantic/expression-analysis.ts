/**
 * Field and metric expressions, parsed in the grammar of their datasource's dialect. An expression is
 * parsed as `SELECT <expression>` and must stay one plain expression: no alias, no FROM, no subquery, no
 * parameter, no second statement. The analysis says which column references it holds (with
 * their spans, so compilation can qualify them) and whether it aggregates.
 */
import type { SqlDialect } from '../plugin-api/sql-dialect.js';
import type { AnalysisOutcome, SqlGrammar } from '../plugin-api/sql-grammar.js';

/** Aggregate functions of the supported databases; a VDB's own aggregates are added from its catalog. */
const BUILT_IN_AGGREGATES = [
  'any_value', 'approx_count_distinct', 'array_agg', 'avg', 'bit_and', 'bit_or', 'bit_xor', 'bool_and', 'bool_or',
  'checksum_agg', 'corr', 'count', 'count_big', 'covar_pop', 'covar_samp', 'every', 'group_concat', 'grouping',
  'json_agg', 'json_object_agg', 'jsonb_agg', 'jsonb_object_agg', 'listagg', 'max', 'median', 'min', 'mode',
  'percentile_cont', 'percentile_disc', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2',
  'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy', 'stddev', 'stddev_pop', 'stddev_samp', 'stdev', 'stdevp',
  'string_agg', 'sum', 'var', 'var_pop', 'var_samp', 'variance', 'varp', 'xmlagg',
];

/** The dialect of an expression, as far as analysis goes: its grammar. */
type AnalyzedDialect = Pick<SqlDialect, 'grammar'>;

/** Analyses expressions of one activation; results are cached per grammar and text. */
export class ExpressionAnalyzer {
  private readonly aggregates: ReadonlySet<string>;
  private readonly caches = new Map<SqlGrammar, Map<string, AnalysisOutcome>>();

  constructor(extraAggregates: Iterable<string> = []) {
    this.aggregates = new Set([...BUILT_IN_AGGREGATES, ...[...extraAggregates].map((name) => name.toLowerCase())]);
  }

  /** Whether a function of this name (any case) aggregates: a built-in aggregate or one of the VDB's. */
  isAggregate(name: string): boolean {
    return this.aggregates.has(name.toLowerCase());
  }

  /** Loads the dialect's grammar and, where it has the shortcut, classifies the texts that are a bare column name at once. */
  async prepare(dialect: AnalyzedDialect, texts: Iterable<string>): Promise<void> {
    const { grammar } = dialect;
    await grammar.load();
    if (!grammar.plainColumns) return;
    const cache = this.cacheOf(grammar);
    const plain = grammar.plainColumns([...texts].filter((text) => !cache.has(text)));
    for (const [text, analysis] of plain) cache.set(text, { ok: true, analysis });
  }

  /** Analyses one expression; `prepare` must have run for its dialect. */
  analyze(dialect: AnalyzedDialect, text: string): AnalysisOutcome {
    const cache = this.cacheOf(dialect.grammar);
    let outcome = cache.get(text);
    if (!outcome) {
      outcome = dialect.grammar.analyzeExpression(text, this.aggregates);
      cache.set(text, outcome);
    }
    return outcome;
  }

  private cacheOf(grammar: SqlGrammar): Map<string, AnalysisOutcome> {
    let cache = this.caches.get(grammar);
    if (!cache) this.caches.set(grammar, (cache = new Map()));
    return cache;
  }
}
