import type { SqlDialect } from '../../core/plugin-api/index.js';
import { quotePostgresIdentifier } from '../postgres/postgres-datasource.js';
import { postgresLogicalType } from '../postgres/postgres-types.js';
import { openPglite } from './pglite-open.js';

/** Embedded PostgreSQL (PGlite): the PostgreSQL dialect's types and introspection over one in-process connection. */
export function pgliteDialect(id: string): SqlDialect {
  const dialect: SqlDialect = {
    id,
    family: 'postgres',
    singleConnection: true,
    open: (settings) => openPglite(dialect, settings),
    quoteIdentifier: quotePostgresIdentifier,
    logicalType: postgresLogicalType,
  };
  return dialect;
}
