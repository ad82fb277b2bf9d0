import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { AnalysisOutcome } from '../../../core/plugin-api/sql-grammar.js';
import { ExpressionAnalyzer } from '../../../core/semantic/expression-analysis.js';
import { replaceSpans } from '../../../core/semantic/model-compilation.js';
import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';

const expressions = suite('field and metric expressions');

async function analyze(family: SqlFamily, text: string, aggregates: string[] = []): Promise<AnalysisOutcome> {
  const analyzer = new ExpressionAnalyzer(aggregates);
  await analyzer.prepare(FAMILY_DIALECTS[family], [text]);
  return analyzer.analyze(FAMILY_DIALECTS[family], text);
}

/** The expression with each reference replaced by `<parts>`: shows the spans found. */
function marked(text: string, outcome: AnalysisOutcome): string {
  if (!outcome.ok) throw new Error(outcome.message);
  return replaceSpans(text, outcome.analysis.references.map((reference) => ({ ...reference, text: `<${reference.parts.join('.')}>` })));
}

expressions('postgres: a bare column name is a plain column, folded to lower case; a reserved word is not a column', async () => {
  const plain = await analyze('postgres', 'Total');
  assert.equal(plain, { ok: true, analysis: { references: [{ parts: ['total'], start: 0, end: 5 }], hasAggregate: false, plainColumn: true } });
  const reserved = await analyze('postgres', 'user');
  assert.equal(reserved.ok && reserved.analysis.references, []);
  const unreserved = await analyze('postgres', 'name');
  assert.ok(unreserved.ok && unreserved.analysis.plainColumn);
});

expressions('postgres: spans of qualified and quoted references, also after multi-byte text', async () => {
  const text = `'héllo' || "Ünï".total || orders.id || x`;
  assert.is(marked(text, await analyze('postgres', text)), `'héllo' || <Ünï.total> || <orders.id> || <x>`);
});

expressions('postgres: aggregates are found by name, by syntax, and from the catalog', async () => {
  for (const [text, extra, expected] of [['SUM(total)', [], true], ['count(*)', [], true], ['median_price(total)', ['median_price'], true], ['upper(name)', [], false]] as const) {
    const outcome = await analyze('postgres', text, [...extra]);
    assert.is(outcome.ok && outcome.analysis.hasAggregate, expected, text);
  }
});

expressions('postgres and mysql: a window function is accepted (Foundation §6.10) and is no aggregate, though its arguments may be', async () => {
  const cases = [['row_number() OVER (PARTITION BY customer_id ORDER BY id)', false], ['SUM(total) OVER (PARTITION BY customer_id)', false], ['SUM(SUM(total)) OVER (ORDER BY region)', true]] as const;
  for (const family of ['postgres', 'mysql'] as const) {
    for (const [text, expected] of cases) {
      const outcome = await analyze(family, text);
      assert.equal(outcome.ok ? outcome.analysis.hasAggregate : outcome.message, expected, `${family}: ${text}`);
    }
  }
});

expressions('postgres: anything beyond one expression is refused', async () => {
  for (const [text, reason] of [
    ['total AS t', /without an alias/], ['total FROM sales.orders', /without FROM/], ['1; DROP TABLE sales.orders', /not several statements/],
    ['total, id', /not a list/], ['(SELECT max(id) FROM sales.orders)', /subquery/],
    ['$1', /parameter/], ['orders.*', /`\*`/], ['total +', /does not parse as PostgreSQL/],
  ] as const) {
    const outcome = await analyze('postgres', text);
    assert.ok(!outcome.ok && reason.test(outcome.message), `${text}: ${JSON.stringify(outcome)}`);
  }
});

expressions('mysql, mssql and oracle: parsed with their grammars; references located past strings and function names', async () => {
  const mysql = "CONCAT(`region`, ' region.x ', orders.status)";
  assert.is(marked(mysql, await analyze('mysql', mysql)), "CONCAT(<region>, ' region.x ', <orders.status>)");
  const mssql = "[orders].[total] * 2 + LEN(name)";
  assert.is(marked(mssql, await analyze('mssql', mssql)), '<orders.total> * 2 + LEN(<name>)');
  const oracle = 'SUM(orders.total)';
  const outcome = await analyze('oracle', oracle);
  assert.is(marked(oracle, outcome), 'SUM(<orders.total>)');
  assert.ok(outcome.ok && outcome.analysis.hasAggregate);
  const broken = await analyze('mssql', 'total +');
  assert.ok(!broken.ok && /does not parse as T-SQL/.test(broken.message));
  const subquery = await analyze('mysql', '(SELECT 1)');
  assert.ok(!subquery.ok && /subquery/.test(subquery.message));
});

expressions.run();
