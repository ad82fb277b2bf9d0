import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MssqlDialect } from '../../adapters/mssql/mssql-dialect.js';
import { mssqlCallerBatch } from '../../adapters/mssql/mssql-roles.js';
import { ANALYST_READS_COLUMNS, CLERK, compiledSync, mappingVdb } from './role-mapping-fixtures.js';

const dialect = new MssqlDialect('mssql');

test('SQL Server: a role per data role holding its grants (columns in parentheses), a user without login to impersonate, IMPERSONATE for the login', () => {
  assert.equal(compiledSync(dialect, mappingVdb([ANALYST_READS_COLUMNS, CLERK])), [
    'create role [vdb_shop_v1_analyst]', 'create user [vdb_shop_v1_analyst_user] without login', 'alter role [vdb_shop_v1_analyst] add member [vdb_shop_v1_analyst_user]',
    'create role [vdb_shop_v1_clerk]', 'create user [vdb_shop_v1_clerk_user] without login', 'alter role [vdb_shop_v1_clerk] add member [vdb_shop_v1_clerk_user]',
    'create role [vdb_shop_v1_analyst_and_clerk]', 'create user [vdb_shop_v1_analyst_and_clerk_user] without login',
    'alter role [vdb_shop_v1_analyst_and_clerk] add member [vdb_shop_v1_analyst_and_clerk_user]',
    'alter role [vdb_shop_v1_analyst] add member [vdb_shop_v1_analyst_and_clerk]',
    'alter role [vdb_shop_v1_clerk] add member [vdb_shop_v1_analyst_and_clerk]',
    'grant impersonate on user::[vdb_shop_v1_analyst_user] to [svc]',
    'grant impersonate on user::[vdb_shop_v1_clerk_user] to [svc]',
    'grant impersonate on user::[vdb_shop_v1_analyst_and_clerk_user] to [svc]',
    'grant select on [sales].[customers] ([id]) to [vdb_shop_v1_analyst]',
    'grant select on [sales].[customers] ([region]) to [vdb_shop_v1_analyst]',
    'grant select on [sales].[orders] to [vdb_shop_v1_analyst]',
    'grant update on [sales].[customers] ([email]) to [vdb_shop_v1_clerk]',
    'grant select on [sales].[orders] to [vdb_shop_v1_clerk]',
    'grant insert on [sales].[orders] to [vdb_shop_v1_clerk]',
    'grant execute on [sales].[discount] to [vdb_shop_v1_clerk]',
  ]);
  assert.equal(dialect.roleChangeSql({ kind: 'drop', role: 'vdb_shop_v1_temp' }), ['drop user [vdb_shop_v1_temp_user]', 'drop role [vdb_shop_v1_temp]']);
  assert.equal(dialect.roleChangeSql({ kind: 'revoke', role: 'r]x', privilege: { kind: 'relation', action: 'delete', schema: 'sales', relation: 'orders' } }),
    ['revoke delete on [sales].[orders] from [r]]x]'], 'names quoted by the dialect');
});

test('SQL Server: a caller\'s statement runs impersonated with a cookie, reverted on failure too; a read-only route always rolls back', () => {
  assert.is(mssqlCallerBatch('select [id] from [sales].[orders] where [id] = ?', true), `set xact_abort on;
declare @vdb_cookie varbinary(100);
begin transaction;
execute as user = ? with cookie into @vdb_cookie;
begin try
select [id] from [sales].[orders] where [id] = ?
end try
begin catch
  revert with cookie = @vdb_cookie;
  if @@trancount > 0 rollback transaction;
  throw;
end catch;
revert with cookie = @vdb_cookie;
rollback transaction;`);
  assert.match(mssqlCallerBatch('update [sales].[orders] set [total] = ?', false), /revert with cookie = @vdb_cookie;\ncommit transaction;$/);
});

test.run();
