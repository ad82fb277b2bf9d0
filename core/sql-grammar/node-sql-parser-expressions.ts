/**
 * Field and metric expressions in a node-sql-parser grammar: the references (located in the text by
 * sql-identifier-chains.ts, as the parser's locations are unreliable) and whether the expression aggregates.
 */
import { messageOf } from '../plugin-api/errors.js';
import type { AnalysisOutcome } from '../plugin-api/sql-grammar.js';
import type { SqlLexicon } from '../plugin-api/sql-syntax.js';
import { EXPRESSION_PREFIX, RejectedExpression } from './expression-shape.js';
import type { NodeSqlParser } from './node-sql-parser-statement-facts.js';
import { columnSpans } from './sql-identifier-chains.js';

type GenericNode = { [field: string]: unknown };

/** The grammar an expression is parsed with: the parser, its database option, its name in messages. */
export interface NodeSqlParserSetting {
  /** The loaded parser. */
  parser: NodeSqlParser;
  /** Its `database` option, e.g. `TransactSQL`. */
  database: string;
  /** The grammar's name in messages: `it does not parse as <label>`. */
  label: string;
}

export function nodeSqlParserExpression(text: string, aggregates: ReadonlySet<string>, grammar: NodeSqlParserSetting, lexicon: SqlLexicon): AnalysisOutcome {
  let ast: unknown;
  try {
    ast = grammar.parser.astify(EXPRESSION_PREFIX + text, { database: grammar.database });
  } catch (error) {
    return { ok: false, message: `it does not parse as ${grammar.label}: ${messageOf(error).split('\n')[0] ?? ''}` };
  }
  try {
    const value = singleTarget(ast);
    const names: string[][] = [];
    let hasAggregate = false;
    walk(value, (node) => {
      if (node['type'] === 'select' || node['ast']) throw new RejectedExpression('a subquery is not allowed');
      // A call with OVER is a window function (Foundation §6.10), no aggregate: its arguments may hold one.
      const window = node['over'] != null;
      if (node['type'] === 'aggr_func' && !window) hasAggregate = true;
      if (node['type'] === 'function' && !window && aggregates.has(functionName(node).toLowerCase())) hasAggregate = true;
      if (node['type'] === 'column_ref') {
        const column = columnName(node['column']);
        if (column === '*') throw new RejectedExpression('`*` is not allowed; name the column');
        const table = qualifierName(node['table']);
        names.push(table ? [table, column] : [column]);
      }
    });
    const references = columnSpans(text, names, lexicon);
    if (!references) throw new RejectedExpression('a column reference could not be located in the text; quote it');
    return { ok: true, analysis: { references, hasAggregate, plainColumn: value['type'] === 'column_ref' } };
  } catch (error) {
    if (error instanceof RejectedExpression) return { ok: false, message: error.message };
    throw error;
  }
}

/** Clauses that must be absent: the expression is parsed as `SELECT <expression>` and nothing else. */
const CLAUSES = ['with', 'distinct', 'from', 'where', 'groupby', 'having', 'orderby', 'limit', 'window', 'top', 'for'];

function singleTarget(ast: unknown): GenericNode {
  const statements = Array.isArray(ast) ? ast : [ast];
  const select = statements.length === 1 ? (statements[0] as GenericNode) : undefined;
  if (!select || select['type'] !== 'select') throw new RejectedExpression('it must be one expression, not several statements');
  const into = select['into'] as GenericNode | null | undefined;
  if (CLAUSES.some((clause) => select[clause] != null) || into?.['position'] != null) {
    throw new RejectedExpression('it must be one expression, without FROM, WHERE or other clauses');
  }
  const columns = select['columns'] as GenericNode[] | undefined;
  const column = columns?.length === 1 ? columns[0] : undefined;
  if (!column) throw new RejectedExpression('it must be one expression, not a list');
  if (column['as']) throw new RejectedExpression('it must be an expression without an alias');
  return column['expr'] as GenericNode;
}

function walk(node: unknown, visit: (node: GenericNode) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  visit(node as GenericNode);
  for (const [key, value] of Object.entries(node)) if (key !== 'loc') walk(value, visit);
}

/** A column is a string or `{ expr: { value } }` depending on the grammar. */
function columnName(column: unknown): string {
  if (typeof column === 'string') return column;
  const value = ((column as GenericNode | null)?.['expr'] as GenericNode | undefined)?.['value'];
  return typeof value === 'string' ? value : String(value);
}

/** A table qualifier is null, a string, or a quoted-string node `{ type, value }`. */
function qualifierName(name: unknown): string | undefined {
  if (typeof name === 'string') return name === '' ? undefined : name;
  const value = (name as GenericNode | null)?.['value'];
  return typeof value === 'string' ? value : undefined;
}

function functionName(node: GenericNode): string {
  const name = node['name'];
  if (typeof name === 'string') return name;
  const parts = (name as { name?: { value?: unknown }[] } | undefined)?.name;
  return String(parts?.at(-1)?.value ?? '');
}
