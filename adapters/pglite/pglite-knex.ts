import type { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { createKnex } from '../../core/plugin-api/adapter-kit.js';
import type { PgliteHost } from './pglite-host.js';

/**
 * The knex instance of a PGlite datasource: knex-pglite's client (PostgreSQL's query builder and `?` →
 * `$n` numbering) over a stand-in for the PGlite instance, with the members knex-pglite calls. Statements
 * knex runs go to the worker like the datasource's own, under the default time limit.
 */
export function pgliteKnex(host: PgliteHost): Knex {
  const pglite = {
    waitReady: Promise.resolve(),
    get closed(): boolean {
      return host.closed;
    },
    query: (sql: string, params?: unknown[]) => host.query(sql, params ?? []),
    // knex closes its connection at destroy: the datasource owns the worker and closes it itself
    close: async () => undefined,
  };
  // knex-pglite takes an instance through a connection function.
  return createKnex({ client: ClientPgLite, connection: (() => ({ pglite })) as unknown as Knex.Config['connection'] });
}
