import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runShapesSuite } from './shapes-suite.js';

const url = process.env['VDB_TEST_MYSQL_URL'];

runShapesSuite({
  name: 'mysql',
  skip: url === undefined ? 'VDB_TEST_MYSQL_URL is not set' : undefined,
  // In MySQL a schema is a database: the tables live in the test database itself.
  schema: url === undefined ? '' : new URL(url).pathname.slice(1),
  setup: [],
  types: { timestamp: 'datetime' },
  datasourceConfig: { adapter: 'mysql', connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  open: async () => guardDatasource(await new MysqlDialect('mysql').open({
    name: 'shapes_db', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
