import { pino } from 'pino';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { isDenial } from '../../core/plugin-api/denial.js';
import type { ColumnUse, Scope } from '../../core/plugin-api/statement-facts.js';
import { toSql } from '../../core/endpoints/bound-text.js';
import { scanSql } from '../../core/endpoints/sql-quoting-scanner.js';
import { DialectBase } from '../../core/plugin-api/dialect-base.js';
import type { SqlDialect } from '../../core/plugin-api/sql-dialect.js';
import { ExtensionRegistries } from '../../core/plugins/extension-registry.js';
import { discoverBuiltIns, loadPlugins } from '../../core/plugins/plugin-loader.js';

/** Every built-in dialect, as the plugin loader registers them. */
async function builtInDialects(): Promise<SqlDialect[]> {
  const extensions = new ExtensionRegistries();
  await loadPlugins(extensions, pino({ level: 'silent' }), discoverBuiltIns());
  return extensions.sqlDialects.ids().sort().map((id) => extensions.sqlDialects.get(id) as SqlDialect);
}

function columnsOf(scope: Scope): ColumnUse[] {
  return [...scope.columns, ...scope.children.flatMap(columnsOf)];
}

/** The column names a statement reads, as its grammar reports them. */
async function readColumns(dialect: SqlDialect, sql: string): Promise<string[]> {
  await dialect.grammar.load();
  const facts = dialect.grammar.statementFacts(sql);
  if (isDenial(facts)) throw new Error(`${dialect.id}: ${sql}: ${facts.reason}`);
  // T-SQL's grammar reads `@p0` as a name, counted only if a column has it.
  return columnsOf(facts.root).filter((use) => !use.ifColumn).map((use) => use.column);
}

const dialects = await builtInDialects();
const base = suite('dialect base: every built-in dialect');

base('the built-in dialects are the five adapters, each extending DialectBase', () => {
  assert.equal(dialects.map((dialect) => dialect.id), ['mssql', 'mysql', 'oracle', 'pglite', 'postgres']);
  for (const dialect of dialects) assert.instance(dialect, DialectBase, dialect.id);
});

base('a quoted identifier is one quoted region of the lexicon, whatever quote characters the name holds', () => {
  for (const dialect of dialects) {
    const quoted = dialect.quoteIdentifier('a"b`c]d e');
    assert.equal(scanSql(quoted, dialect.lexicon), [{ kind: 'quoted identifier', start: 0, end: quoted.length }], dialect.id);
  }
});

base('the grammar reads an identifier quoted by the dialect back as the name', async () => {
  for (const dialect of dialects) {
    // Upper case: Oracle refuses quoted names its folding would not produce.
    assert.equal(await readColumns(dialect, `select ${dialect.quoteIdentifier('ORDER LINES')} from s.t`), ['ORDER LINES'], dialect.id);
  }
});

base('an unquoted name reads as its folding, the same column as the folded name quoted', async () => {
  for (const dialect of dialects) {
    const folded = dialect.foldIdentifier('Total');
    assert.equal(await readColumns(dialect, 'select Total from s.t'), [folded], dialect.id);
    assert.equal(await readColumns(dialect, `select ${dialect.quoteIdentifier(folded)} from s.t`), [folded], dialect.id);
  }
});

base('the grammar parses bound values in the placeholder style, and a literal ? is written only where knex has an escape', async () => {
  for (const dialect of dialects) {
    assert.equal(await readColumns(dialect, 'select a from s.t where b = ? and c = ?'), ['a', 'b', 'c'].map((name) => dialect.foldIdentifier(name)), dialect.id);
    let literal: string | undefined;
    try {
      literal = toSql("select '?'", [], { dialect }).sql;
    } catch {
      literal = undefined;
    }
    assert.is(literal, dialect.placeholders.escapedQuestionMark ? "select '\\?'" : undefined, dialect.id);
  }
});

base.run();
