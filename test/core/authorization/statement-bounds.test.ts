import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authorizeSql, type SqlAuthorization } from '../../../core/authorization/sql-authorizer.js';
import { denialError } from '../../../core/plugin-api/denial.js';
import { InputError } from '../../../core/plugin-api/errors.js';
import { ERROR_CATALOG } from '../../../core/plugin-api/error-catalog.js';
import type { SqlFamily } from '../../../core/plugin-api/sql-dialect.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { longText, manyTerms, nestedSubqueries } from '../../support/hostile-statements.js';
import { ANALYST, ANYONE, CLERK, retailVdb } from './authorization-fixtures.js';

const FAMILIES: SqlFamily[] = ['postgres', 'mysql', 'mssql', 'oracle'];

function authorize(family: SqlFamily, sql: string, options: { maxStatementBytes?: number; allowFunctions?: string[] } = {}): Promise<SqlAuthorization> {
  return authorizeSql({ sql, dialect: FAMILY_DIALECTS[family], grants: ANYONE, catalog: retailVdb.catalog, readOnly: true, ...options });
}

function decision(result: SqlAuthorization): string {
  return result.allowed ? 'allowed' : [result.code, result.resource].filter((part) => part !== undefined).join(' ');
}

const bounds = suite('statements too long, too deep or with too many terms: statement_too_complex, never a thrown error');

for (const family of FAMILIES) {
  bounds(`${family}: 7,000 terms, 1,800 nested subqueries and 100,000 characters are refused; the next statement is served`, async () => {
    for (const sql of [manyTerms(7_000), nestedSubqueries(1_800), longText(100_000)]) {
      const result = await authorize(family, sql);
      assert.is(decision(result), 'statement_too_complex', result.allowed ? 'allowed' : result.reason);
    }
    assert.is(decision(await authorize(family, 'SELECT 1+1 AS two FROM sales.orders')), family === 'oracle' ? 'unknown_relation SALES.ORDERS' : 'allowed');
  });
}

bounds('the length is counted in UTF-8 bytes, before parsing, against maxStatementBytes', async () => {
  const text = `SELECT '${'é'.repeat(600)}' AS x`;
  assert.is(decision(await authorize('postgres', text, { maxStatementBytes: 1_024 })), 'statement_too_complex');
  assert.is(decision(await authorize('postgres', text, { maxStatementBytes: 2_048 })), 'allowed');
  const unparseable = `selec ${'x'.repeat(70_000)}`;
  const refused = await authorize('postgres', unparseable);
  assert.equal(refused.allowed ? 'allowed' : [refused.code, refused.reason], [
    'statement_too_complex', 'the statement is 70006 bytes long, over the limit of 65536 (sql.maxStatementBytes): simplify it or split it into several',
  ]);
});

bounds('the parser\'s own limit is named in the reason', async () => {
  const result = await authorize('postgres', nestedSubqueries(1_800));
  assert.match(result.allowed ? '' : result.reason, /^the statement nests too deeply or has too many terms to be parsed \(.+\): simplify it/);
});

bounds('a denial too complex is the caller\'s 400 statement_too_complex, not a 403', async () => {
  const result = await authorize('mysql', manyTerms(7_000));
  if (result.allowed) throw new Error('expected a denial');
  const error = denialError(result);
  assert.instance(error, InputError);
  assert.equal([error.code, ERROR_CATALOG[error.code].status], ['statement_too_complex', 400]);
});

bounds.run();

const extra = suite('allowFunctions: a VDB widens its dialect\'s allow-list');

extra('postgres: the name as an unquoted identifier, folded; bare or pg_catalog-qualified calls', async () => {
  const sql = 'select pg_size_pretty(sum(total)::bigint), pg_catalog.pg_size_pretty(1) from sales.orders';
  assert.is(decision(await authorize('postgres', sql)), 'function_not_allowed pg_size_pretty');
  assert.is(decision(await authorize('postgres', sql, { allowFunctions: ['PG_SIZE_PRETTY'] })), 'allowed');
  assert.is(decision(await authorize('postgres', 'select "PG_SIZE_PRETTY"(1)', { allowFunctions: ['pg_size_pretty'] })), 'function_not_allowed PG_SIZE_PRETTY');
  assert.is(decision(await authorize('postgres', 'select hr.pg_size_pretty(1)', { allowFunctions: ['pg_size_pretty'] })), 'function_not_allowed hr.pg_size_pretty');
});

extra('mysql, mssql: names compare without case', async () => {
  assert.is(decision(await authorize('mysql', 'select VERSION()', { allowFunctions: ['version'] })), 'allowed');
  assert.is(decision(await authorize('mssql', 'select db_name()', { allowFunctions: ['DB_NAME'] })), 'allowed');
  assert.is(decision(await authorize('mysql', 'select @@version', { allowFunctions: ['version'] })), 'function_not_allowed @@version');
});

extra('the decision cache keeps VDBs with different allowFunctions apart', async () => {
  const sql = 'select pg_size_pretty(1)';
  assert.is(decision(await authorize('postgres', sql, { allowFunctions: ['pg_size_pretty'] })), 'allowed');
  assert.is(decision(await authorize('postgres', sql)), 'function_not_allowed pg_size_pretty');
});

extra('a VDB function called unqualified needs its schema; qualified, its grant', async () => {
  const unqualified = await authorizeSql({ sql: 'select discount(total) from sales.orders', dialect: FAMILY_DIALECTS.postgres, grants: CLERK, catalog: retailVdb.catalog, readOnly: true });
  assert.equal(unqualified.allowed ? 'allowed' : [unqualified.code, unqualified.reason], [
    'function_not_allowed', 'function discount is not allowed (not on the allow-list; call the VDB\'s function as sales.discount)',
  ]);
  const qualified = await authorizeSql({ sql: 'select sales.discount(total) from sales.orders', dialect: FAMILY_DIALECTS.postgres, grants: ANALYST, catalog: retailVdb.catalog, readOnly: true });
  assert.is(decision(qualified), 'forbidden sales.discount');
});

extra('the refusal names the function and how to allow it', async () => {
  const result = await authorize('postgres', "select pg_read_file('/etc/passwd')");
  assert.equal(result.allowed ? 'allowed' : [result.code, result.reason, result.resource], [
    'function_not_allowed', 'function pg_read_file is not allowed (not on the allow-list; a VDB may add it with allowFunctions)', 'pg_read_file',
  ]);
});

extra.run();
