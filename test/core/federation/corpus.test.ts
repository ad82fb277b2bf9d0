// test-lane: postgres-server
// (the PostgreSQL + MariaDB pair runs on both servers, and every pair's oracle on the PostgreSQL server)
import { PgliteDialect } from '../../../adapters/pglite/pglite-dialect.js';
import { runtimeOver } from '../../../core/sql/datasource-runtime.js';
import { BACKENDS, forEachBackend, type Backend } from '../../support/backends.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { dropDatabase, freshDatabase, pgliteOracle, serverOracle } from './corpus-oracle.js';
import { runCorpusSuite, type CorpusPair, type PairSide } from './corpus-suite.js';

const postgresServer = BACKENDS.find((backend) => backend.name === 'postgres') as Backend;

/** The process's shared PGlite (its schema is dropped after, the PGlite stays). */
const sharedPgliteSide: PairSide = {
  family: 'postgres', config: { adapter: 'pglite' }, open: sharedPglite, release: async () => undefined,
};

/** A PGlite of the suite's own. */
const ownPgliteSide: PairSide = {
  family: 'postgres',
  config: { adapter: 'pglite' },
  open: async () => runtimeOver(await new PgliteDialect('pglite').open({ name: 'shop_db', adapter: 'pglite', connection: {}, pool: {}, init: [], baseDir: process.cwd() })),
  release: (datasource) => datasource.close(),
};

/** The test database of a server. */
function serverSide(backend: Backend, name: string): PairSide {
  return { family: backend.family, config: backend.datasourceConfig, open: () => backend.open(name), release: (datasource) => datasource.close() };
}

/** A database of its own on the PostgreSQL server, beside the test database. */
function secondPostgresSide(): PairSide {
  const url = postgresServer.url ?? '';
  return {
    family: 'postgres',
    config: { ...postgresServer.datasourceConfig, connection: { connectionString: url.replace(/\/[^/?]*(\?|$)/, '/fed_second$1') } },
    open: async () => postgresServer.open('crm_db', await freshDatabase(url, 'fed_second')),
    release: async (datasource) => {
      await datasource.close();
      await dropDatabase(url, 'fed_second');
    },
  };
}

const serverOracleOf = (setup: readonly string[]) => serverOracle(postgresServer.url ?? '', setup);

/**
 * A pair's corpus twice: with shipping (docs/federation.md#shipping-the-small-side), where at least `shipped`
 * statements are answered by the PostgreSQL side with the other side's rows, and with the engine alone.
 */
function inBothWays(pair: CorpusPair, shipped: number): void {
  runCorpusSuite({ ...pair, name: `${pair.name}, shipping`, shipped });
  runCorpusSuite({ ...pair, name: `${pair.name}, the engine alone`, federation: { shipMaxRows: 0 } });
}

// Each backend's job runs the pairs it completes: PGlite alone (on any machine), PGlite or a second database
// with the PostgreSQL server, the MariaDB server with the PostgreSQL server.
forEachBackend((backend) => {
  if (backend.name === 'pglite') {
    inBothWays({ name: 'PGlite + PGlite', crm: sharedPgliteSide, shop: ownPgliteSide, oracle: pgliteOracle }, 30);
  } else if (backend.name === 'postgres') {
    inBothWays({ name: 'PGlite + PostgreSQL', skip: backend.skip, crm: sharedPgliteSide, shop: serverSide(backend, 'shop_db'), oracle: serverOracleOf }, 30);
    inBothWays({ name: 'two PostgreSQL databases', skip: backend.skip, crm: secondPostgresSide(), shop: serverSide(backend, 'shop_db'), oracle: serverOracleOf }, 30);
  } else {
    inBothWays({
      name: 'MariaDB + PostgreSQL', skip: backend.skip ?? postgresServer.skip, crm: serverSide(backend, 'crm_db'), shop: serverSide(postgresServer, 'shop_db'), oracle: serverOracleOf,
    }, 30);
  }
});
