/**
 * Field and metric expressions in the PostgreSQL grammar (libpg-query): the references with their spans,
 * and whether the expression aggregates. The WASM module must be loaded.
 */
import { parseSync, scanSync } from 'libpg-query';
import { messageOf } from '../plugin-api/errors.js';
import type { AnalysisOutcome, ColumnReference, ExpressionAnalysis } from '../plugin-api/sql-grammar.js';
import { EXPRESSION_PREFIX, RejectedExpression } from './expression-shape.js';

type PgNode = { [field: string]: unknown };

const PLAIN_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;
/** libpg-query keyword kinds that still read as a column name: none, and unreserved keywords. */
const COLUMN_KEYWORD_KINDS: ReadonlySet<number> = new Set([0, 1]);

/** The texts that are a bare identifier and no reserved keyword, classified in one scan. */
export function libpgQueryPlainColumns(texts: readonly string[]): Map<string, ExpressionAnalysis> {
  const plain = new Map<string, ExpressionAnalysis>();
  const candidates = [...new Set(texts)].filter((text) => PLAIN_IDENTIFIER.test(text));
  if (candidates.length === 0) return plain;
  const tokens = new Map(scanSync(candidates.join('\n')).tokens.map((token) => [token.start, token]));
  let offset = 0;
  for (const text of candidates) {
    const token = tokens.get(offset);
    if (token && token.end === offset + text.length && COLUMN_KEYWORD_KINDS.has(token.keywordKind)) {
      // Unquoted identifiers fold to lower case in PostgreSQL.
      const reference = { parts: [text.toLowerCase()], start: 0, end: text.length };
      plain.set(text, { references: [reference], hasAggregate: false, plainColumn: true });
    }
    offset += text.length + 1;
  }
  return plain;
}

export function libpgQueryExpression(text: string, aggregates: ReadonlySet<string>): AnalysisOutcome {
  const sql = EXPRESSION_PREFIX + text;
  let statements: unknown[];
  try {
    statements = parseSync(sql).stmts ?? [];
  } catch (error) {
    return { ok: false, message: `it does not parse as PostgreSQL: ${messageOf(error)}` };
  }
  try {
    const value = singleTarget(statements);
    const found: { parts: string[]; location: number }[] = [];
    let hasAggregate = false;
    walk(value, (type, node) => {
      if (type === 'SubLink') throw new RejectedExpression('a subquery is not allowed');
      if (type === 'ParamRef') throw new RejectedExpression('a parameter is not allowed');
      if (type === 'FuncCall') {
        // A call with OVER is a window function (Foundation §6.10), no aggregate: its arguments may hold one.
        if (node['over']) return;
        const name = (node['funcname'] as PgNode[]).map(stringOf).at(-1)?.toLowerCase() ?? '';
        const aggregateSyntax = ['agg_star', 'agg_distinct', 'agg_filter', 'agg_order', 'agg_within_group'].some((flag) => node[flag]);
        if (aggregateSyntax || aggregates.has(name)) hasAggregate = true;
      }
      if (type === 'ColumnRef') {
        const fields = node['fields'] as PgNode[];
        if (fields.some((field) => 'A_Star' in field)) throw new RejectedExpression('`*` is not allowed; name the column');
        found.push({ parts: fields.map(stringOf), location: Number(node['location']) });
      }
    });
    return { ok: true, analysis: { references: spans(sql, found), hasAggregate, plainColumn: 'ColumnRef' in (value as PgNode) } };
  } catch (error) {
    if (error instanceof RejectedExpression) return { ok: false, message: error.message };
    throw error;
  }
}

function stringOf(node: PgNode): string {
  const inner = node['String'] as { sval?: string } | undefined;
  return inner?.sval ?? '';
}

/** The one target of `SELECT <expression>`, refusing anything beyond it. */
function singleTarget(statements: unknown[]): unknown {
  if (statements.length !== 1) throw new RejectedExpression('it must be one expression, not several statements');
  const select = ((statements[0] as PgNode)['stmt'] as PgNode)['SelectStmt'] as PgNode | undefined;
  const extra = select && Object.keys(select).filter((key) => !['targetList', 'limitOption', 'op'].includes(key));
  if (!select || (extra && extra.length > 0)) throw new RejectedExpression('it must be one expression, without FROM, WHERE or other clauses');
  const targets = select['targetList'] as PgNode[];
  const target = targets.length === 1 ? (targets[0]?.['ResTarget'] as PgNode | undefined) : undefined;
  if (!target) throw new RejectedExpression('it must be one expression, not a list');
  if (target['name'] !== undefined) throw new RejectedExpression('it must be an expression without an alias');
  return target['val'];
}

function walk(node: unknown, visit: (type: string, node: PgNode) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    // Node wrappers are `{ TypeName: { ...fields } }` with an upper-case type name.
    if (/^[A-Z]/.test(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) visit(key, value as PgNode);
    walk(value, visit);
  }
}

/**
 * Spans of column references. The parser gives each reference's start as a byte offset; the scanner's
 * tokens give its end (a reference of n parts is 2n-1 tokens: names and dots).
 */
function spans(sql: string, found: { parts: string[]; location: number }[]): ColumnReference[] {
  if (found.length === 0) return [];
  const tokens = scanSync(sql).tokens;
  const indexByStart = new Map(tokens.map((token, index) => [token.start, index]));
  const toIndex = byteToStringIndex(sql);
  return found.map(({ parts, location }) => {
    const first = indexByStart.get(location) ?? -1;
    const last = tokens[first + 2 * (parts.length - 1)];
    if (first < 0 || !last) throw new Error(`no token at column reference offset ${location}`);
    return { parts, start: toIndex(location) - EXPRESSION_PREFIX.length, end: toIndex(last.end) - EXPRESSION_PREFIX.length };
  });
}

/** libpg-query counts UTF-8 bytes; JavaScript strings count UTF-16 units. */
function byteToStringIndex(text: string): (byteOffset: number) => number {
  if (Buffer.byteLength(text) === text.length) return (offset) => offset;
  const bytes = Buffer.from(text, 'utf8');
  return (offset) => bytes.subarray(0, offset).toString('utf8').length;
}
