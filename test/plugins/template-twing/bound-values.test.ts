import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { containsPlaceholder, placeholderToken, scalarValue, toSql } from '../../../core/endpoints/bound-text.js';
import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';
import { definitionErrorOf } from './template-support.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';

const binding = suite('bound text: SQL bindings per dialect family');
const p = placeholderToken;

binding('placeholders become ? bindings in order, repeated ones included', () => {
  const { sql, bindings } = toSql(`select ${p(1)}, ${p(0)}, ${p(1)}`, ['a', 'b'], { dialect: FAMILY_DIALECTS.postgres });
  assert.is(sql, 'select ?, ?, ?');
  assert.equal(bindings, ['b', 'a', 'b']);
});

binding('a placeholder inside quotes or comments is refused in every family', () => {
  const cases: [SqlFamily, string][] = [
    ['postgres', `'${p(0)}'`], ['postgres', `"${p(0)}"`], ['postgres', `-- ${p(0)}`], ['postgres', `/* /* */ ${p(0)} */`],
    ['postgres', `$$ ${p(0)} $$`], ['postgres', `$q$ ${p(0)} $q$`], ['postgres', `E'\\' ${p(0)}'`], ['postgres', `'it''s ${p(0)}'`],
    ['mysql', `'\\' ${p(0)}'`], ['mysql', `"${p(0)}"`], ['mysql', `\`${p(0)}\``], ['mysql', `# ${p(0)}`], ['mysql', `-- ${p(0)}`],
    ['mssql', `[${p(0)}]`], ['mssql', `[a]]${p(0)}]`], ['mssql', `N'${p(0)}'`],
    ['oracle', `'${p(0)}'`], ['oracle', `"${p(0)}"`],
  ];
  for (const [family, sql] of cases) {
    const error = definitionErrorOf(() => toSql(`select ${sql} from t`, ['v'], { dialect: FAMILY_DIALECTS[family], origin: { file: 'defs/q.yaml', lines: [7] } }));
    assert.is(error.reason, 'quoted placeholder: bind the value, drop the quotes', `${family}: ${sql}`);
    assert.is(error.line, 7);
  }
});

binding('quoting rules follow each server, so a region never ends early', () => {
  // PostgreSQL: a backslash is literal in a standard string, so the placeholder after it is code
  assert.is(toSql(`select 'a\\', ${p(0)}`, [1], { dialect: FAMILY_DIALECTS.postgres }).sql, "select 'a\\', ?");
  // MySQL: `--` without a space is two minus signs; a string opened after it still counts
  definitionErrorOf(() => toSql(`select 1--1, '\n${p(0)}'`, [1], { dialect: FAMILY_DIALECTS.mysql }));
  // MySQL: block comments do not nest, so the quote after the first */ opens a string
  definitionErrorOf(() => toSql(`select /* a /* b */ 'x */ ${p(0)}'`, [1], { dialect: FAMILY_DIALECTS.mysql }));
  // PostgreSQL: [ is an array subscript, not a quote
  assert.is(toSql(`select arr[${p(0)}], array[${p(1)}]`, [1, 2], { dialect: FAMILY_DIALECTS.postgres }).sql, 'select arr[?], array[?]');
  // PostgreSQL: $1 and a$b$ are not dollar quotes
  assert.is(toSql(`select a$b$, ${p(0)}`, [1], { dialect: FAMILY_DIALECTS.postgres }).sql, 'select a$b$, ?');
});

binding('a literal ? is escaped where knex unescapes it, refused where the driver would bind it', () => {
  assert.is(toSql("select data ? 'k', '?' -- why?", [], { dialect: FAMILY_DIALECTS.postgres }).sql, "select data \\? 'k', '\\?' -- why\\?");
  assert.is(toSql('select [a?] from t', [], { dialect: FAMILY_DIALECTS.mssql }).sql, 'select [a\\?] from t');
  for (const family of ['mysql', 'oracle'] as const) {
    const error = definitionErrorOf(() => toSql("select '?'", [], { dialect: FAMILY_DIALECTS[family] }));
    assert.match(error.reason, /literal \? cannot be sent/);
  }
});

binding('a backslash right before ? or a placeholder is refused', () => {
  definitionErrorOf(() => toSql('select a \\? b', [], { dialect: FAMILY_DIALECTS.postgres }));
  definitionErrorOf(() => toSql(`select \\${p(0)}`, [1], { dialect: FAMILY_DIALECTS.postgres }));
});

binding('constructs the scanner will not guess about are refused', () => {
  assert.match(definitionErrorOf(() => toSql("select q'[it's]' from dual", [], { dialect: FAMILY_DIALECTS.oracle })).reason, /q'/);
  assert.match(definitionErrorOf(() => toSql('select /*! 1 */', [], { dialect: FAMILY_DIALECTS.mysql })).reason, /executable comments/);
});

binding('stray placeholder brackets are refused', () => {
  definitionErrorOf(() => toSql('select ⟦x⟧', [], { dialect: FAMILY_DIALECTS.postgres }));
});

binding('scalarValue returns typed values for a whole placeholder and text otherwise', () => {
  const values = [7, null, { a: 1 }, new Date('2026-01-01T00:00:00Z')];
  assert.is(scalarValue(p(0), values), 7);
  assert.is(scalarValue(p(1), values), null);
  assert.equal(scalarValue(p(2), values), { a: 1 });
  assert.is(scalarValue(`n=${p(0)} x=${p(1)} o=${p(2)} d=${p(3)}`, values), 'n=7 x= o={"a":1} d=2026-01-01T00:00:00.000Z');
  assert.is(scalarValue('plain', values), 'plain');
  assert.is(scalarValue(12, values), 12);
  assert.throws(() => scalarValue(p(9), values), /no captured value/);
});

binding('containsPlaceholder', () => {
  assert.ok(containsPlaceholder(`a ${p(3)}`));
  assert.not.ok(containsPlaceholder('a [3]'));
});

binding.run();
