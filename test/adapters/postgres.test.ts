import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import type { DatasourceSettings } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';
import { runDialectConformance } from './dialect-conformance.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];
const dialect = new PostgresDialect('postgres');
const settings = (name: string, connection: Record<string, unknown>): DatasourceSettings =>
  ({ name, adapter: 'postgres', connection, pool: { max: 4 }, init: [], baseDir: process.cwd() });

runDialectConformance({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  open: async () => runtimeOver(await dialect.open(settings('conformance_pg', { connectionString: url }))),
  unreachable: {
    password: 'pg-secret-pw',
    open: async () => runtimeOver(await dialect.open(settings('unreachable',
      { host: '127.0.0.1', port: 1, user: 'postgres', password: 'pg-secret-pw', database: 'test' }))),
  },
});
