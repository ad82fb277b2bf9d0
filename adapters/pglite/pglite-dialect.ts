import type { Datasource, DatasourceSettings, DialectCapabilities } from '../../core/plugin-api/index.js';
import { PostgresDialect } from '../postgres/postgres-dialect.js';
import { openPglite } from './pglite-open.js';

/** Embedded PostgreSQL (PGlite): the PostgreSQL dialect, its grammar and rules, over one in-process connection. */
export class PgliteDialect extends PostgresDialect {
  override readonly capabilities: DialectCapabilities = { singleConnection: true, explain: true, enforcesRoles: true };

  override open(settings: DatasourceSettings): Promise<Datasource> {
    return openPglite(this, settings);
  }
}
