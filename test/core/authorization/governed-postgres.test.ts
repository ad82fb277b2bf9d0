import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runGovernedSuite } from './governed-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];

/** The same server and database, as another login (the test server trusts local connections). */
function urlAs(login: string): string {
  const as = new URL(url ?? '');
  as.username = login;
  as.password = '';
  return as.toString();
}

runGovernedSuite({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  open: async () => guardDatasource(await new PostgresDialect('postgres').open({
    name: 'retail_db', adapter: 'postgres', connection: { connectionString: url }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
  connectingAs: (login) => ({ adapter: 'postgres', connection: { connectionString: urlAs(login) }, pool: { max: 4 } }),
});
