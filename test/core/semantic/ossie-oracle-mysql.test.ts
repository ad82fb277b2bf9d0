import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runOracleSuite } from './ossie-oracle-suite.js';

const url = process.env['VDB_TEST_MYSQL_URL'];

runOracleSuite({
  name: 'mysql',
  skip: url === undefined ? 'VDB_TEST_MYSQL_URL is not set' : undefined,
  family: 'mysql',
  // The models' schemas (public, tpch, schema) are databases of the server, made by the schema statements.
  datasourceConfig: { adapter: 'mysql', connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  open: async () => guardDatasource(await new MysqlDialect('mysql').open({
    name: 'ossie_db', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: false,
  cleanup: async (schema, raw) => {
    for (const name of schema.schemas) await raw.query(`drop database if exists \`${name}\``, []);
    await raw.close();
  },
});
