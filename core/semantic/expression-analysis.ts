/**
 * Field and metric expressions, parsed in the grammar of their datasource: libpg-query (the PostgreSQL
 * grammar) for the postgres family, node-sql-parser for the others. An expression is parsed as
 * `SELECT <expression>` and must stay one plain expression: no alias, no FROM, no subquery, no window, no
 * parameter, no second statement. The analysis says which column references it holds (with their spans, so
 * compilation can qualify them) and whether it aggregates.
 */
import { loadModule, parseSync, scanSync } from 'libpg-query';
import { messageOf } from '../plugin-api/errors.js';
import type { SqlFamily } from '../plugin-api/sql-dialect.js';
import { genericColumnSpans, type ColumnReference } from './sql-identifier-chains.js';

export type { ColumnReference };


export interface ExpressionAnalysis {
  references: ColumnReference[];
  hasAggregate: boolean;
  /** True when the whole expression is one column reference. */
  plainColumn: boolean;
}

export type AnalysisOutcome = { ok: true; analysis: ExpressionAnalysis } | { ok: false; message: string };

/** Aggregate functions of the supported databases; a VDB's own aggregates are added from its catalog. */
const BUILT_IN_AGGREGATES = [
  'any_value', 'approx_count_distinct', 'array_agg', 'avg', 'bit_and', 'bit_or', 'bit_xor', 'bool_and', 'bool_or',
  'checksum_agg', 'corr', 'count', 'count_big', 'covar_pop', 'covar_samp', 'every', 'group_concat', 'grouping',
  'json_agg', 'json_object_agg', 'jsonb_agg', 'jsonb_object_agg', 'listagg', 'max', 'median', 'min', 'mode',
  'percentile_cont', 'percentile_disc', 'regr_avgx', 'regr_avgy', 'regr_count', 'regr_intercept', 'regr_r2',
  'regr_slope', 'regr_sxx', 'regr_sxy', 'regr_syy', 'stddev', 'stddev_pop', 'stddev_samp', 'stdev', 'stdevp',
  'string_agg', 'sum', 'var', 'var_pop', 'var_samp', 'variance', 'varp', 'xmlagg',
];

const PREFIX = 'SELECT ';
const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;
/** libpg-query keyword kinds that still read as a column name: none, and unreserved keywords. */
const COLUMN_KEYWORD_KINDS: ReadonlySet<number> = new Set([0, 1]);

let postgresLoading: Promise<void> | undefined;

type PgNode = { [field: string]: unknown };

class Rejected extends Error {}

/** Analyses expressions of one activation; results are cached by family and text. */
export class ExpressionAnalyzer {
  private readonly aggregates: ReadonlySet<string>;
  private readonly cache = new Map<string, AnalysisOutcome>();

  constructor(extraAggregates: Iterable<string> = []) {
    this.aggregates = new Set([...BUILT_IN_AGGREGATES, ...[...extraAggregates].map((name) => name.toLowerCase())]);
  }

  /**
   * Loads the family's grammar and classifies the texts that are a bare identifier in one scan: most fields
   * are a column name, and one scan of all of them costs less than a parse of each.
   */
  async prepare(family: SqlFamily, texts: Iterable<string>): Promise<void> {
    if (family !== 'postgres') {
      await genericParser(family);
      return;
    }
    postgresLoading ??= loadModule();
    await postgresLoading;
    const candidates = [...new Set(texts)].filter((text) => PLAIN_IDENTIFIER.test(text) && !this.cache.has(cacheKey(family, text)));
    if (candidates.length === 0) return;
    const tokens = new Map(scanSync(candidates.join('\n')).tokens.map((token) => [token.start, token]));
    let offset = 0;
    for (const text of candidates) {
      const token = tokens.get(offset);
      if (token && token.end === offset + text.length && COLUMN_KEYWORD_KINDS.has(token.keywordKind)) {
        // Unquoted identifiers fold to lower case in PostgreSQL.
        const reference = { parts: [text.toLowerCase()], start: 0, end: text.length };
        this.cache.set(cacheKey(family, text), { ok: true, analysis: { references: [reference], hasAggregate: false, plainColumn: true } });
      }
      offset += text.length + 1;
    }
  }

  /** Analyses one expression; `prepare` must have run for its family. */
  analyze(family: SqlFamily, text: string): AnalysisOutcome {
    const key = cacheKey(family, text);
    let outcome = this.cache.get(key);
    if (!outcome) {
      outcome = family === 'postgres' ? this.analyzePostgres(text) : this.analyzeGeneric(family, text);
      this.cache.set(key, outcome);
    }
    return outcome;
  }

  private analyzePostgres(text: string): AnalysisOutcome {
    const sql = PREFIX + text;
    let statements: unknown[];
    try {
      statements = parseSync(sql).stmts ?? [];
    } catch (error) {
      return { ok: false, message: `it does not parse as PostgreSQL: ${messageOf(error)}` };
    }
    try {
      const value = singlePostgresTarget(statements);
      const found: { parts: string[]; location: number }[] = [];
      let hasAggregate = false;
      walkPostgres(value, (type, node) => {
        if (type === 'SubLink') throw new Rejected('a subquery is not allowed');
        if (type === 'ParamRef') throw new Rejected('a parameter is not allowed');
        if (type === 'FuncCall') {
          if (node['over']) throw new Rejected('a window function is not allowed');
          const name = (node['funcname'] as PgNode[]).map(stringOf).at(-1)?.toLowerCase() ?? '';
          const aggregateSyntax = ['agg_star', 'agg_distinct', 'agg_filter', 'agg_order', 'agg_within_group'].some((flag) => node[flag]);
          if (aggregateSyntax || this.aggregates.has(name)) hasAggregate = true;
        }
        if (type === 'ColumnRef') {
          const fields = node['fields'] as PgNode[];
          if (fields.some((field) => 'A_Star' in field)) throw new Rejected('`*` is not allowed; name the column');
          found.push({ parts: fields.map(stringOf), location: Number(node['location']) });
        }
      });
      return { ok: true, analysis: { references: postgresSpans(sql, found), hasAggregate, plainColumn: 'ColumnRef' in (value as PgNode) } };
    } catch (error) {
      if (error instanceof Rejected) return { ok: false, message: error.message };
      throw error;
    }
  }

  private analyzeGeneric(family: Exclude<SqlFamily, 'postgres'>, text: string): AnalysisOutcome {
    const grammar = GENERIC_GRAMMARS[family];
    const parser = loadedGenericParsers.get(family);
    if (!parser) throw new Error(`the ${family} grammar is not loaded: call prepare() first`);
    let ast: unknown;
    try {
      ast = parser.astify(PREFIX + text, { database: grammar.database });
    } catch (error) {
      return { ok: false, message: `it does not parse as ${grammar.label}: ${messageOf(error).split('\n')[0] ?? ''}` };
    }
    try {
      const value = singleGenericTarget(ast);
      const names: string[][] = [];
      let hasAggregate = false;
      walkGeneric(value, (node) => {
        if (node['type'] === 'select' || node['ast']) throw new Rejected('a subquery is not allowed');
        if (node['over']) throw new Rejected('a window function is not allowed');
        if (node['type'] === 'aggr_func') hasAggregate = true;
        if (node['type'] === 'function' && this.aggregates.has(genericFunctionName(node).toLowerCase())) hasAggregate = true;
        if (node['type'] === 'column_ref') {
          const column = genericColumnName(node['column']);
          if (column === '*') throw new Rejected('`*` is not allowed; name the column');
          const table = genericName(node['table']);
          names.push(table ? [table, column] : [column]);
        }
      });
      const references = genericColumnSpans(text, names, family);
      if (!references) throw new Rejected('a column reference could not be located in the text; quote it');
      return { ok: true, analysis: { references, hasAggregate, plainColumn: value['type'] === 'column_ref' } };
    } catch (error) {
      if (error instanceof Rejected) return { ok: false, message: error.message };
      throw error;
    }
  }
}

function cacheKey(family: SqlFamily, text: string): string {
  return `${family}\u0000${text}`;
}

function stringOf(node: PgNode): string {
  const inner = node['String'] as { sval?: string } | undefined;
  return inner?.sval ?? '';
}

/** The one target of `SELECT <expression>`, refusing anything beyond it. */
function singlePostgresTarget(statements: unknown[]): unknown {
  if (statements.length !== 1) throw new Rejected('it must be one expression, not several statements');
  const select = ((statements[0] as PgNode)['stmt'] as PgNode)['SelectStmt'] as PgNode | undefined;
  const extra = select && Object.keys(select).filter((key) => !['targetList', 'limitOption', 'op'].includes(key));
  if (!select || (extra && extra.length > 0)) throw new Rejected('it must be one expression, without FROM, WHERE or other clauses');
  const targets = select['targetList'] as PgNode[];
  const target = targets.length === 1 ? (targets[0]?.['ResTarget'] as PgNode | undefined) : undefined;
  if (!target) throw new Rejected('it must be one expression, not a list');
  if (target['name'] !== undefined) throw new Rejected('it must be an expression without an alias');
  return target['val'];
}

function walkPostgres(node: unknown, visit: (type: string, node: PgNode) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walkPostgres(item, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    // Node wrappers are `{ TypeName: { ...fields } }` with an upper-case type name.
    if (/^[A-Z]/.test(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) visit(key, value as PgNode);
    walkPostgres(value, visit);
  }
}

/**
 * Spans of PostgreSQL column references. The parser gives each reference's start as a byte offset; the
 * scanner's tokens give its end (a reference of n parts is 2n-1 tokens: names and dots).
 */
function postgresSpans(sql: string, found: { parts: string[]; location: number }[]): ColumnReference[] {
  if (found.length === 0) return [];
  const tokens = scanSync(sql).tokens;
  const indexByStart = new Map(tokens.map((token, index) => [token.start, index]));
  const toIndex = byteToStringIndex(sql);
  return found.map(({ parts, location }) => {
    const first = indexByStart.get(location) ?? -1;
    const last = tokens[first + 2 * (parts.length - 1)];
    if (first < 0 || !last) throw new Error(`no token at column reference offset ${location}`);
    return { parts, start: toIndex(location) - PREFIX.length, end: toIndex(last.end) - PREFIX.length };
  });
}

/** libpg-query counts UTF-8 bytes; JavaScript strings count UTF-16 units. */
function byteToStringIndex(text: string): (byteOffset: number) => number {
  if (Buffer.byteLength(text) === text.length) return (offset) => offset;
  const bytes = Buffer.from(text, 'utf8');
  return (offset) => bytes.subarray(0, offset).toString('utf8').length;
}

interface GenericParser {
  astify(sql: string, options: { database: string }): unknown;
}

type GenericNode = { [field: string]: unknown };

/**
 * node-sql-parser grammars. Oracle has none; DB2's is the closest (double-quoted identifiers, the same
 * function call syntax), as the SQL authorizer also uses.
 */
const GENERIC_GRAMMARS: Readonly<Record<Exclude<SqlFamily, 'postgres'>, { database: string; label: string; load: () => Promise<unknown> }>> = {
  mysql: { database: 'MySQL', label: 'MySQL', load: () => import('node-sql-parser/build/mysql.js') },
  mssql: { database: 'TransactSQL', label: 'T-SQL', load: () => import('node-sql-parser/build/transactsql.js') },
  oracle: { database: 'DB2', label: 'Oracle (DB2 grammar)', load: () => import('node-sql-parser/build/db2.js') },
};

const genericLoading = new Map<SqlFamily, Promise<GenericParser>>();
const loadedGenericParsers = new Map<SqlFamily, GenericParser>();

function genericParser(family: Exclude<SqlFamily, 'postgres'>): Promise<GenericParser> {
  let loading = genericLoading.get(family);
  if (!loading) {
    loading = GENERIC_GRAMMARS[family].load().then((module) => {
      const { Parser } = (module as { default: { Parser: new () => GenericParser } }).default;
      const parser = new Parser();
      loadedGenericParsers.set(family, parser);
      return parser;
    });
    genericLoading.set(family, loading);
  }
  return loading;
}

/** Clauses that must be absent: the expression is parsed as `SELECT <expression>` and nothing else. */
const GENERIC_CLAUSES = ['with', 'distinct', 'from', 'where', 'groupby', 'having', 'orderby', 'limit', 'window', 'top', 'for'];

function singleGenericTarget(ast: unknown): GenericNode {
  const statements = Array.isArray(ast) ? ast : [ast];
  const select = statements.length === 1 ? (statements[0] as GenericNode) : undefined;
  if (!select || select['type'] !== 'select') throw new Rejected('it must be one expression, not several statements');
  const into = select['into'] as GenericNode | null | undefined;
  if (GENERIC_CLAUSES.some((clause) => select[clause] != null) || into?.['position'] != null) {
    throw new Rejected('it must be one expression, without FROM, WHERE or other clauses');
  }
  const columns = select['columns'] as GenericNode[] | undefined;
  const column = columns?.length === 1 ? columns[0] : undefined;
  if (!column) throw new Rejected('it must be one expression, not a list');
  if (column['as']) throw new Rejected('it must be an expression without an alias');
  return column['expr'] as GenericNode;
}

function walkGeneric(node: unknown, visit: (node: GenericNode) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walkGeneric(item, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  visit(node as GenericNode);
  for (const [key, value] of Object.entries(node)) if (key !== 'loc') walkGeneric(value, visit);
}

/** A column is a string or `{ expr: { value } }` depending on the grammar. */
function genericColumnName(column: unknown): string {
  if (typeof column === 'string') return column;
  const value = ((column as GenericNode | null)?.['expr'] as GenericNode | undefined)?.['value'];
  return typeof value === 'string' ? value : String(value);
}

/** A table qualifier is null, a string, or a quoted-string node `{ type, value }`. */
function genericName(name: unknown): string | undefined {
  if (typeof name === 'string') return name === '' ? undefined : name;
  const value = (name as GenericNode | null)?.['value'];
  return typeof value === 'string' ? value : undefined;
}

function genericFunctionName(node: GenericNode): string {
  const name = node['name'];
  if (typeof name === 'string') return name;
  const parts = (name as { name?: { value?: unknown }[] } | undefined)?.name;
  return String(parts?.at(-1)?.value ?? '');
}
