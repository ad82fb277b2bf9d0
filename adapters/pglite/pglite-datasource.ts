import type { PGlite } from '@electric-sql/pglite';
import type { Knex } from 'knex';
import type { SqlDialect } from '../../core/plugin-api/index.js';
import { PostgresDatasource, runRaw, type PgResult } from '../postgres/postgres-datasource.js';

/** A PostgreSQL datasource over one embedded PGlite instance, reached through knex's single connection. */
export class PgliteDatasource extends PostgresDatasource {
  constructor(name: string, dialect: SqlDialect, knex: Knex, private readonly db: PGlite) {
    super(name, dialect, knex);
  }

  /** knex-pglite's connection is no pg client: go through knex. */
  protected override pooledQuery(sql: string, bindings: readonly unknown[]): Promise<PgResult> {
    return runRaw(this.knex, sql, bindings);
  }

  /** knex closes PGlite when it had opened its connection; close it here when it never did. */
  protected override async release(): Promise<void> {
    await super.release();
    if (!this.db.closed) await this.db.close();
  }
}
