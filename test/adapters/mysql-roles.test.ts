import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MysqlDialect } from '../../adapters/mysql/mysql-dialect.js';
import { ANALYST_READS_COLUMNS, CLERK, compiledSync, mappingVdb } from './role-mapping-fixtures.js';

const dialect = new MysqlDialect('mysql');

test('MySQL: a user per role set, created locked, holding its privileges itself (the pair: the union), columns in parentheses', () => {
  assert.equal(compiledSync(dialect, mappingVdb([ANALYST_READS_COLUMNS, CLERK])), [
    "create user `vdb_shop_v1_analyst`@'%' account lock",
    "create user `vdb_shop_v1_clerk`@'%' account lock",
    "create user `vdb_shop_v1_analyst_and_clerk`@'%' account lock",
    "grant select (`id`) on `sales`.`customers` to `vdb_shop_v1_analyst`@'%'",
    "grant select (`region`) on `sales`.`customers` to `vdb_shop_v1_analyst`@'%'",
    "grant select on `sales`.`orders` to `vdb_shop_v1_analyst`@'%'",
    "grant update (`email`) on `sales`.`customers` to `vdb_shop_v1_clerk`@'%'",
    "grant select on `sales`.`orders` to `vdb_shop_v1_clerk`@'%'",
    "grant insert on `sales`.`orders` to `vdb_shop_v1_clerk`@'%'",
    "grant execute on function `sales`.`discount` to `vdb_shop_v1_clerk`@'%'",
    "grant select (`id`) on `sales`.`customers` to `vdb_shop_v1_analyst_and_clerk`@'%'",
    "grant select (`region`) on `sales`.`customers` to `vdb_shop_v1_analyst_and_clerk`@'%'",
    "grant select on `sales`.`orders` to `vdb_shop_v1_analyst_and_clerk`@'%'",
    "grant update (`email`) on `sales`.`customers` to `vdb_shop_v1_analyst_and_clerk`@'%'",
    "grant insert on `sales`.`orders` to `vdb_shop_v1_analyst_and_clerk`@'%'",
    "grant execute on function `sales`.`discount` to `vdb_shop_v1_analyst_and_clerk`@'%'",
  ]);
  assert.equal(dialect.loginPasswordSql(), "alter user ?@'%' identified by ? account unlock");
});

test('MySQL: user names fit 32 bytes, longer ones cut and hashed', () => {
  const created = compiledSync(dialect, { ...mappingVdb([ANALYST_READS_COLUMNS, CLERK]), name: 'northwind_reporting' })
    .flatMap((sql) => /^create user `([^`]+)`/.exec(sql)?.slice(1) ?? []);
  assert.is(created[1], 'vdb_northwind_reporting_v1_clerk', '32 bytes: kept');
  for (const name of [created[0], created[2]]) assert.match(name ?? '', /^vdb_northwind_reporting_[0-9a-f]{8}$/);
  assert.is.not(created[0], created[2]);
});

test.run();
