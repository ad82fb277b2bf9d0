import type { Datasource, DatasourceSettings, DialectCapabilities } from '../../core/plugin-api/adapter-kit.js';
import { PostgresDialect } from '../postgres/postgres-dialect.js';
import { openPglite } from './pglite-open.js';

/** Embedded PostgreSQL (PGlite): the PostgreSQL dialect, its grammar and rules, over one in-process connection. */
export class PgliteDialect extends PostgresDialect {
  /**
   * One session, but its datasource orders its calls itself (pglite-host.ts: single statements sent ahead, a
   * transaction holding the session), so the core need not run them one at a time.
   */
  override readonly capabilities: DialectCapabilities = { explain: true, enforcesRoles: true, postgresqlText: true };

  override open(settings: DatasourceSettings): Promise<Datasource> {
    return openPglite(this, settings);
  }
}
