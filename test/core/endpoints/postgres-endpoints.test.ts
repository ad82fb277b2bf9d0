import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runEndpointSuite } from './endpoint-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];

runEndpointSuite({
  name: 'postgres',
  family: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  open: async () => guardDatasource(await new PostgresDialect('postgres').open({
    name: 'retail_db', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
