/** One dialect per SQL family, for tests whose tables name the family a statement is written in. */
import { MssqlDialect } from '../../adapters/mssql/mssql-dialect.js';
import { MysqlDialect } from '../../adapters/mysql/mysql-dialect.js';
import { OracleDialect } from '../../adapters/oracle/oracle-dialect.js';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import type { DialectBase } from '../../core/plugin-api/dialect-base.js';
import type { SqlFamily } from '../../core/plugin-api/sql-dialect.js';

export const FAMILY_DIALECTS: Readonly<Record<SqlFamily, DialectBase>> = {
  postgres: new PostgresDialect('postgres'),
  mysql: new MysqlDialect('mysql'),
  mssql: new MssqlDialect('mssql'),
  oracle: new OracleDialect('oracle'),
};
