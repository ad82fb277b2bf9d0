import type { Test } from 'uvu';
import { MysqlDialect } from '../../adapters/mysql/mysql-dialect.js';
import { PostgresDialect } from '../../adapters/postgres/postgres-dialect.js';
import type { Datasource, SqlDialect } from '../../core/plugin-api/sql-dialect.js';
import { runtimeOver } from '../../core/sql/datasource-runtime.js';
import { sharedPglite } from './shared-pglite.js';

/** A database the shared suites run on: the embedded PGlite always, a server when its URL is set. */
export interface Backend {
  /** The adapter's name, as a datasource's `adapter` says it. */
  name: 'pglite' | 'postgres' | 'mysql';
  family: 'postgres' | 'mysql';
  /** Why its suites are skipped here (its server's URL is not set). */
  skip: string | undefined;
  /** The server's URL (`VDB_TEST_POSTGRES_URL`, `VDB_TEST_MYSQL_URL`). */
  url: string | undefined;
  /** The test runner's lane (scripts/run-tests.mjs): suites on one server share its database and roles, one at a time. */
  lane: string | undefined;
  /** The database of a MySQL URL: in MySQL a schema is a database, so the suites' tables live in it. */
  database: string;
  /** A datasource named `name` on it (on the server, at `url` when given), wrapped in the runtime as the core wraps it. */
  open(name?: string, url?: string): Promise<Datasource>;
  /** Whether a suite closes what `open` gave it (the process's shared PGlite lives as long as the process). */
  closeAfter: boolean;
  /** The datasource as a service config writes it (adapter, connection, pool). */
  datasourceConfig: Record<string, unknown>;
}

function server(name: 'postgres' | 'mysql', variable: string, dialect: SqlDialect): Backend {
  const url = process.env[variable];
  return {
    name,
    family: name,
    skip: url === undefined ? `${variable} is not set` : undefined,
    url,
    lane: url === undefined ? undefined : `${name}-server`,
    database: name === 'mysql' && url !== undefined ? new URL(url).pathname.slice(1) : '',
    open: async (datasource = 'retail_db', at = url) => runtimeOver(await dialect.open({
      name: datasource, adapter: name, connection: { connectionString: at }, pool: { max: 4 }, init: [], baseDir: process.cwd(),
    })),
    closeAfter: true,
    datasourceConfig: { adapter: name, connection: { connectionString: url ?? '' }, pool: { max: 4 } },
  };
}

/** Every backend; adding one here runs every forEachBackend suite on it. */
export const BACKENDS: readonly Backend[] = [
  {
    name: 'pglite', family: 'postgres', skip: undefined, url: undefined, lane: undefined, database: '',
    open: sharedPglite, closeAfter: false, datasourceConfig: { adapter: 'pglite' },
  },
  server('postgres', 'VDB_TEST_POSTGRES_URL', new PostgresDialect('postgres')),
  server('mysql', 'VDB_TEST_MYSQL_URL', new MysqlDialect('mysql')),
];

/**
 * Registers a shared suite once for each backend (of `families`, when given). The test runner runs each
 * backend of such a file as a job of its own, naming it in `VDB_TEST_BACKEND`; without it, every backend runs.
 */
export function forEachBackend(register: (backend: Backend) => void, families?: readonly Backend['family'][]): void {
  const only = process.env['VDB_TEST_BACKEND'];
  for (const backend of BACKENDS) {
    if (only !== undefined && backend.name !== only) continue;
    if (families !== undefined && !families.includes(backend.family)) continue;
    register(backend);
  }
}

/**
 * Where the backend's server is not configured here, reports its suite as one skipped test saying why and
 * runs it; true then, and the suite registers nothing else.
 */
export function skippedHere<T>(test: Test<T>, backend: { skip?: string | undefined }): boolean {
  if (backend.skip === undefined) return false;
  test.skip(`(${backend.skip})`, () => undefined);
  test.run();
  return true;
}
