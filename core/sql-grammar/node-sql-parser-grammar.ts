/**
 * A grammar of node-sql-parser, for servers without a parser of their own in JavaScript (MySQL, SQL Server,
 * Oracle through DB2's). Its grammars are close to the servers', not the same: text a grammar reads
 * differently from its server is refused before parsing, so the authorizer never sees less than the server
 * runs.
 */
import { deny } from '../plugin-api/denial.js';
import type { SqlGrammar } from '../plugin-api/sql-grammar.js';
import type { DialectSyntax } from '../plugin-api/sql-syntax.js';
import { nodeSqlParserExpression } from './node-sql-parser-expressions.js';
import { nodeSqlParserStatementFacts, type NodeSqlParser } from './node-sql-parser-statement-facts.js';
import { withServerPlaceholders } from './server-placeholders.js';

/** How `nodeSqlParserGrammar` reads one dialect: the node-sql-parser grammar, its loader and its hazards. */
export interface NodeSqlParserGrammarOptions {
  /** node-sql-parser's `database` option, e.g. `MySQL`, `TransactSQL`, `DB2`. */
  database: string;
  /** Names the grammar in messages, e.g. `T-SQL` or `Oracle (DB2 grammar)`. */
  label: string;
  /** Imports the grammar's build, loaded on first use: `() => import('node-sql-parser/build/mysql.js')`. */
  load: () => Promise<unknown>;
  /**
   * The form the grammar reads for the n-th bound value, where it cannot read the server's own: DB2's reads
   * named binds only, so Oracle's `:1` is given as `:p1`, which means the same here.
   */
  placeholder?: (n: number) => string;
  /**
   * Why the text cannot be authorized with this grammar (where it reads the text differently from the
   * server), e.g. `a MySQL executable comment or optimizer hint`; undefined when it can be parsed safely.
   */
  textHazard?: (sql: string) => string | undefined;
}

type ParserModule = { default: { Parser: new () => NodeSqlParser } };

/** A dialect's grammar built on node-sql-parser, loaded on first use. */
export function nodeSqlParserGrammar(dialect: DialectSyntax, options: NodeSqlParserGrammarOptions): SqlGrammar {
  const placeholders = options.placeholder ? { ...dialect.placeholders, numbered: options.placeholder } : dialect.placeholders;
  let loading: Promise<void> | undefined;
  let parser: NodeSqlParser | undefined;
  const loaded = (): NodeSqlParser => {
    if (!parser) throw new Error(`the ${options.label} grammar is not loaded: call load() first`);
    return parser;
  };
  return {
    label: options.label,
    load() {
      loading ??= options.load().then((module) => {
        parser = new (module as ParserModule).default.Parser();
      });
      return loading;
    },
    statementFacts(sql) {
      const hazard = backslashHazard(sql) ?? options.textHazard?.(sql);
      if (hazard) return deny('unparseable', `the statement holds ${hazard}`);
      const text = withServerPlaceholders(sql, placeholders);
      if (typeof text !== 'string') return text;
      return nodeSqlParserStatementFacts(text, loaded(), options.database, dialect);
    },
    analyzeExpression: (text, aggregates) =>
      nodeSqlParserExpression(text, aggregates, { parser: loaded(), database: options.database, label: options.label }, dialect.lexicon),
  };
}

/**
 * MySQL reads `\'` as an escaped quote unless NO_BACKSLASH_ESCAPES; the T-SQL grammar of the parser reads
 * it as an escape where SQL Server does not. Values are bound parameters, so literals rarely need one.
 */
function backslashHazard(sql: string): string | undefined {
  return sql.includes('\\') ? 'a backslash, whose meaning in strings depends on the server; bind the value as a parameter' : undefined;
}
