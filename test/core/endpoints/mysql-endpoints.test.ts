import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runEndpointSuite } from './endpoint-suite.js';

const url = process.env['VDB_TEST_MYSQL_URL'];

runEndpointSuite({
  name: 'mysql',
  family: 'mysql',
  skip: url === undefined ? 'VDB_TEST_MYSQL_URL is not set' : undefined,
  open: async () => guardDatasource(await new MysqlDialect('mysql').open({
    name: 'retail_db', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
