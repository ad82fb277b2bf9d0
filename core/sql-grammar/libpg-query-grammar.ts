/**
 * The PostgreSQL grammar itself (libpg-query, compiled to WASM): the grammar of the postgres family. Being
 * the server's own parser, it needs no text hazards and folds unquoted names as the server does.
 */
import { loadModule } from 'libpg-query';
import type { SqlGrammar } from '../plugin-api/sql-grammar.js';
import type { DialectSyntax } from '../plugin-api/sql-syntax.js';
import { libpgQueryExpression, libpgQueryPlainColumns } from './libpg-query-expressions.js';
import { libpgQueryStatementFacts } from './libpg-query-statement-facts.js';

/** One WASM module serves every dialect that uses the grammar. */
let loading: Promise<void> | undefined;

/** The grammar for a dialect; it parses statements with the dialect's placeholders (`$1`). */
export function libpgQueryGrammar(dialect: Pick<DialectSyntax, 'placeholders'>): SqlGrammar {
  return {
    label: 'PostgreSQL',
    load: () => (loading ??= loadModule()),
    statementFacts: (sql) => libpgQueryStatementFacts(sql, dialect.placeholders),
    analyzeExpression: libpgQueryExpression,
    plainColumns: libpgQueryPlainColumns,
  };
}
