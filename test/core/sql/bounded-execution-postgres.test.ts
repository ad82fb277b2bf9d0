import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { RUNAWAY_MARK, runBoundedSuite } from './bounded-execution-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];

runBoundedSuite({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  open: async () => runtimeOver(await new PostgresDialect('postgres').open({
    name: 'retail_db', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  close: (datasource) => datasource.close(),
  runaways: async (datasource) => {
    const result = await datasource.query(
      `select count(*)::integer as n from pg_catalog.pg_stat_activity
       where datname = pg_catalog.current_database() and state = 'active' and pid <> pg_catalog.pg_backend_pid() and query like ?`,
      [`%${RUNAWAY_MARK}%`],
    );
    return Number(result.rows[0]?.['n']);
  },
});
