import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runShapesSuite } from './shapes-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];

runShapesSuite({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  schema: 'semshapes',
  setup: ['create schema if not exists semshapes'],
  types: { timestamp: 'timestamp' },
  datasourceConfig: { adapter: 'postgres', connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  open: async () => guardDatasource(await new PostgresDialect('postgres').open({
    name: 'shapes_db', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
