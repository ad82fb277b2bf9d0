import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OracleDialect } from '../../adapters/oracle/oracle-dialect.js';
import { oracleProxyLogin } from '../../adapters/oracle/oracle-roles.js';
import { ANALYST_READS_COLUMNS, ANALYST_READS_ORDERS, CLERK, compiledSync, mappingVdb } from './role-mapping-fixtures.js';

const dialect = new OracleDialect('oracle');

test('Oracle: a role per data role holding its grants, a proxy user holding only that role, the login connecting through it', () => {
  assert.equal(compiledSync(dialect, mappingVdb([ANALYST_READS_ORDERS, CLERK])), [
    'create role "vdb_shop_v1_analyst" not identified', 'create user "vdb_shop_v1_analyst_user" no authentication',
    'grant create session to "vdb_shop_v1_analyst_user"', 'grant "vdb_shop_v1_analyst" to "vdb_shop_v1_analyst_user"',
    'create role "vdb_shop_v1_clerk" not identified', 'create user "vdb_shop_v1_clerk_user" no authentication',
    'grant create session to "vdb_shop_v1_clerk_user"', 'grant "vdb_shop_v1_clerk" to "vdb_shop_v1_clerk_user"',
    'create role "vdb_shop_v1_analyst_and_clerk" not identified', 'create user "vdb_shop_v1_analyst_and_clerk_user" no authentication',
    'grant create session to "vdb_shop_v1_analyst_and_clerk_user"', 'grant "vdb_shop_v1_analyst_and_clerk" to "vdb_shop_v1_analyst_and_clerk_user"',
    'grant "vdb_shop_v1_analyst" to "vdb_shop_v1_analyst_and_clerk"',
    'grant "vdb_shop_v1_clerk" to "vdb_shop_v1_analyst_and_clerk"',
    'alter user "vdb_shop_v1_analyst_user" grant connect through "svc" with role "vdb_shop_v1_analyst"',
    'alter user "vdb_shop_v1_clerk_user" grant connect through "svc" with role "vdb_shop_v1_clerk"',
    'alter user "vdb_shop_v1_analyst_and_clerk_user" grant connect through "svc" with role "vdb_shop_v1_analyst_and_clerk"',
    'grant select on "sales"."orders" to "vdb_shop_v1_analyst"',
    'grant update ("email") on "sales"."customers" to "vdb_shop_v1_clerk"',
    'grant select on "sales"."orders" to "vdb_shop_v1_clerk"',
    'grant insert on "sales"."orders" to "vdb_shop_v1_clerk"',
    'grant execute on "sales"."discount" to "vdb_shop_v1_clerk"',
  ]);
  assert.is(oracleProxyLogin('svc', 'vdb_shop_v1_analyst'), 'svc[vdb_shop_v1_analyst_user]');
});

test('Oracle: a column-limited read has no grant (Oracle selects whole relations): refused, not widened', () => {
  assert.throws(() => compiledSync(dialect, mappingVdb([ANALYST_READS_COLUMNS])), /Oracle grants select on whole relations only: sales\.customers\.id needs a view/);
});

test.run();
