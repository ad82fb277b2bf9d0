import { MysqlDialect } from '../../../adapters/mysql/mysql-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runCompositionSuite } from './composition-suite.js';

const url = process.env['VDB_TEST_MYSQL_URL'];

runCompositionSuite({
  name: 'mysql',
  skip: url === undefined ? 'VDB_TEST_MYSQL_URL is not set' : undefined,
  // In MySQL a schema is a database: the tables live in the test database itself.
  schema: url === undefined ? '' : new URL(url).pathname.slice(1),
  setup: [],
  nullSafe: (left, right) => `${left} <=> ${right}`,
  datasourceConfig: { adapter: 'mysql', connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  open: async () => guardDatasource(await new MysqlDialect('mysql').open({
    name: 'comp_db', adapter: 'mysql', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
