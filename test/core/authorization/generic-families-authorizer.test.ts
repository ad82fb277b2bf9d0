import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { CallerGrants } from '../../../core/authorization/grants.js';
import { authorizeSql } from '../../../core/authorization/sql-authorizer.js';
import type { CatalogColumn } from '../../../core/plugin-api/catalog.js';
import type { VdbCatalog } from '../../../core/plugin-api/vdb.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { retailVdb } from './authorization-fixtures.js';
import { CALLERS, GENERIC_DECISIONS, outcome } from './decision-table.js';

const table = suite('authorizeSql, mysql, mssql and oracle families: the decision table');

for (const [family, sql, caller, expected] of GENERIC_DECISIONS) {
  table(`${family}, ${caller}: ${sql.replace(/\n/g, ' ⏎ ')} → ${expected === 'allowed' ? expected : expected.join(' ')}`, async () => {
    const { grants, readOnly } = CALLERS[caller];
    const result = await authorizeSql({ sql, dialect: FAMILY_DIALECTS[family], grants, catalog: retailVdb.catalog, readOnly });
    assert.equal(outcome(result, expected), expected, result.allowed ? 'allowed' : result.reason);
  });
}

table.run();

const oracle = suite('authorizeSql, oracle family (DB2 grammar, names folded to upper case)');

const column = (name: string): CatalogColumn => ({ name, nativeType: 'VARCHAR2(80)', logicalType: 'string', nullable: true });
const oracleCatalog: VdbCatalog = {
  schemas: ['SALES'],
  functions: [],
  relations: [{
    schema: 'SALES', name: 'CUSTOMERS', kind: 'table', columns: ['ID', 'EMAIL', 'REGION'].map(column),
    primaryKey: ['ID'], uniqueKeys: [], foreignKeys: [], datasource: 'erp',
  }],
};
const oracleAnalyst: CallerGrants = { access: 'restricted', roles: ['analyst'], grants: [{ resource: 'SALES.CUSTOMERS', allow: ['select'], columns: ['ID', 'REGION'] }] };

const ORACLE_CASES: Array<[string, string]> = [
  ['select id, region from sales.customers where id = ? fetch first 10 rows only', 'allowed'],
  ['select id, rownum from SALES.CUSTOMERS where rownum < 3', 'allowed'],
  ['select d.region from (select region from sales.customers) d', 'allowed'],
  ['select email from sales.customers', 'forbidden SALES.CUSTOMERS.EMAIL'],
  ['select "EMAIL" from "SALES"."CUSTOMERS"', 'forbidden SALES.CUSTOMERS.EMAIL'],
  ['select "email" from sales.customers', 'unparseable'],
  ['select secret_fn from (select region from sales.customers) d', 'function_not_allowed SECRET_FN'],
  ['select dbms_random.value from dual', 'function_not_allowed DBMS_RANDOM.VALUE'],
  ['select c.id from sales.customers c, sales.orders o where c.id = o.id(+)', 'unparseable'],
];

for (const [sql, expected] of ORACLE_CASES) {
  oracle(`${sql} → ${expected}`, async () => {
    const result = await authorizeSql({ sql, dialect: FAMILY_DIALECTS.oracle, grants: oracleAnalyst, catalog: oracleCatalog, readOnly: true });
    const got = result.allowed ? 'allowed' : [result.code, result.resource].filter((part) => part !== undefined).join(' ');
    assert.is(got, expected, result.allowed ? 'allowed' : result.reason);
  });
}

oracle.run();
