import { PgliteDialect } from '../../../adapters/pglite/pglite-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { BACKENDS, type Backend } from '../../support/backends.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { dropDatabase, freshDatabase, pgliteOracle, serverOracle } from './corpus-oracle.js';
import type { CorpusData, CorpusPair, PairSide } from './corpus-suite.js';

const postgresServer = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;

/** The process's shared PGlite (its schema is dropped after, the PGlite stays). */
const sharedPgliteSide: PairSide = {
  family: 'postgres', config: { adapter: 'pglite' }, open: sharedPglite, release: async () => undefined,
};

/** A PGlite of the suite's own. */
const ownPgliteSide: PairSide = {
  family: 'postgres',
  config: { adapter: 'pglite' },
  open: async () => runtimeOver(await new PgliteDialect('pglite').open({ name: 'second_db', adapter: 'pglite', connection: {}, pool: {}, init: [], baseDir: process.cwd() })),
  release: (datasource) => datasource.close(),
};

/** The test database of a server. */
function serverSide(backend: Backend, name: string): PairSide {
  return { family: backend.family, config: backend.datasourceConfig, open: () => backend.open(name), release: (datasource) => datasource.close() };
}

/** A database `database` of its own on the PostgreSQL server, beside the test database. */
function secondPostgresSide(database: string): PairSide {
  const url = postgresServer.url ?? '';
  return {
    family: 'postgres',
    config: { ...postgresServer.datasourceConfig, connection: { connectionString: url.replace(/\/[^/?]*(\?|$)/, `/${database}$1`) } },
    open: async () => postgresServer.open('first_db', await freshDatabase(url, database)),
    release: async (datasource) => {
      await datasource.close();
      await dropDatabase(url, database);
    },
  };
}

/**
 * The pairs a backend's job completes: PGlite alone (on any machine), PGlite or a second database with the
 * PostgreSQL server, the MariaDB server (the first side) with the PostgreSQL server. Databases the pairs create
 * on the server are named after the data set's VDB, so two corpora may run at once. A pair runs with the
 * service's default `federation` config; `{ ...pair, federation }` runs it with another.
 */
export function corpusPairs(backend: Backend, data: CorpusData): CorpusPair[] {
  const serverOracleOf = (setup: readonly string[]) => serverOracle(postgresServer.url ?? '', setup, `${data.vdb}_oracle`);
  if (backend.name === 'pglite') return [{ name: 'PGlite + PGlite', first: sharedPgliteSide, second: ownPgliteSide, oracle: pgliteOracle }];
  if (backend.name === 'postgres') {
    return [
      { name: 'PGlite + PostgreSQL', skip: backend.skip, first: sharedPgliteSide, second: serverSide(backend, 'second_db'), oracle: serverOracleOf },
      { name: 'two PostgreSQL databases', skip: backend.skip, first: secondPostgresSide(`${data.vdb}_second`), second: serverSide(backend, 'second_db'), oracle: serverOracleOf },
    ];
  }
  return [{
    name: 'MariaDB + PostgreSQL', skip: backend.skip ?? postgresServer.skip, first: serverSide(backend, 'first_db'), second: serverSide(postgresServer, 'second_db'), oracle: serverOracleOf,
  }];
}
