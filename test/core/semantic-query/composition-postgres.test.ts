import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runCompositionSuite } from './composition-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];

runCompositionSuite({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  schema: 'semcomp',
  setup: ['create schema if not exists semcomp'],
  nullSafe: (left, right) => `${left} IS NOT DISTINCT FROM ${right}`,
  datasourceConfig: { adapter: 'postgres', connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  open: async () => guardDatasource(await new PostgresDialect('postgres').open({
    name: 'comp_db', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
});
