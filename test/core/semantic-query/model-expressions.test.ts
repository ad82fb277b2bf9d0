import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadModule } from 'libpg-query';
import { writeModelExpression } from '../../../core/semantic-query/model-expressions.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';

/** A model's OSI_SQL_2026 expression written in each datasource's SQL (decision 32 of docs/semantic-query.md). */
const test = suite('model expressions written per dialect');
test.before(async () => {
  await loadModule();
});

const written = (family: keyof typeof FAMILY_DIALECTS, text: string) => writeModelExpression(text, FAMILY_DIALECTS[family], 'field f');

test('NULLS LAST in a window: kept where the server has it, a leading CASE on MySQL; ascending NULLs last by default', () => {
  const text = 'ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY order_date NULLS LAST)';
  assert.equal(written('mysql', text), { ok: true, sql: 'ROW_NUMBER() OVER (PARTITION BY `customer_id` ORDER BY CASE WHEN `order_date` IS NULL THEN 1 ELSE 0 END, `order_date` ASC)' });
  assert.equal(written('postgres', text), { ok: true, sql: 'ROW_NUMBER() OVER (PARTITION BY "customer_id" ORDER BY "order_date" ASC NULLS LAST)' });
  assert.equal(written('postgres', 'RANK() OVER (ORDER BY amount DESC)'), { ok: true, sql: 'RANK() OVER (ORDER BY "amount" DESC NULLS FIRST)' });
});

test('literals are written into the text as each server reads them; || and IFF in portable forms', () => {
  assert.equal(written('mysql', "IFF(flag = TRUE, 'it''s', 'a\\b') || name"), { ok: true, sql: "CONCAT((CASE WHEN (`flag` = TRUE) THEN 'it''s' ELSE 'a\\\\b' END), `name`)" });
  assert.equal(written('postgres', "'a\\b' || name"), { ok: true, sql: `('a\\b' || "name")` });
  // A decimal keeps its digits, which a double would round.
  assert.equal(written('postgres', 'amount * 1.10000000000000000001 + 12345678901234567890'), { ok: true, sql: '(("amount" * 1.10000000000000000001) + 12345678901234567890)' });
  assert.equal(written('mssql', "IFF(flag = TRUE, N, 2.5)"), { ok: true, sql: '(CASE WHEN ([flag] = 1) THEN [n] ELSE 2.5 END)' });
});

test('what a server has no form of is refused with its code; what the grammar does not read is left to the datasource', () => {
  const median = written('mysql', 'MEDIAN(amount)');
  assert.equal(median.ok ? undefined : [median.osiCode, median.parsed], ['E_FUNCTION_NOT_ALLOWED', true]);
  const nested = written('postgres', 'AVG(COUNT(id))');
  assert.equal(nested.ok ? undefined : nested.osiCode, 'E_NESTED_AGGREGATION_DEFERRED');
  for (const text of ['TRY_CAST(amount AS INTEGER)', 'SUBSTRING(name FROM 2)']) {
    const left = written('postgres', text);
    assert.equal(left.ok ? undefined : [left.osiCode, left.parsed], ['E_INVALID_EXPRESSION', false], text);
  }
});

test.run();
