import pg from 'pg';
import { PostgresDialect } from '../../../adapters/postgres/postgres-dialect.js';
import { guardDatasource } from '../../../core/sql/datasource-runtime.js';
import { runOracleSuite } from './ossie-oracle-suite.js';

const url = process.env['VDB_TEST_POSTGRES_URL'];
/** A database of its own: the models' tables are in public, which other suites use. */
const DATABASE = `ossie_oracle_${process.pid}`;
const ownUrl = () => {
  const own = new URL(url ?? '');
  own.pathname = `/${DATABASE}`;
  return own.toString();
};

async function onServer(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

runOracleSuite({
  name: 'postgres',
  skip: url === undefined ? 'VDB_TEST_POSTGRES_URL is not set' : undefined,
  family: 'postgres',
  datasourceConfig: { adapter: 'postgres', connection: { connectionString: url === undefined ? '' : ownUrl() }, pool: { max: 4 } },
  prepare: async () => {
    await onServer(`drop database if exists ${DATABASE} with (force)`);
    await onServer(`create database ${DATABASE}`);
  },
  open: async () => guardDatasource(await new PostgresDialect('postgres').open({
    name: 'ossie_db', adapter: 'postgres', connection: { connectionString: ownUrl() }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
  })),
  closeAfter: true,
  cleanup: () => onServer(`drop database if exists ${DATABASE} with (force)`),
});
