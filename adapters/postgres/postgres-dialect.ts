import { DEFAULT_ACQUIRE_TIMEOUT_MS, createKnex, knexPool, type DatasourceSettings, type ServerConnectionFields, type SqlDialect } from '../../core/plugin-api/index.js';
import { PostgresDatasource, quotePostgresIdentifier } from './postgres-datasource.js';
import { postgresLogicalType, postgresTypeParsers } from './postgres-types.js';

/** The datasource `connection` of a postgres datasource (plugin.json holds its JSON Schema). */
export interface PostgresConnection extends ServerConnectionFields {
  /** Use TLS; `true` verifies the server certificate. */
  ssl?: boolean;
}

export function postgresDialect(id: string): SqlDialect {
  const dialect: SqlDialect = {
    id,
    family: 'postgres',
    async open(settings: DatasourceSettings) {
      const connection = settings.connection as PostgresConnection;
      const client = createKnex({
        client: 'pg',
        connection: {
          ...(connection.connectionString === undefined
            ? { host: connection.host, port: connection.port, user: connection.user, password: connection.password, database: connection.database }
            : { connectionString: connection.connectionString }),
          ...(connection.ssl === undefined ? {} : { ssl: connection.ssl }),
          types: postgresTypeParsers,
          application_name: 'vdb-service',
          connectionTimeoutMillis: settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
        },
        pool: knexPool(settings.pool),
        acquireConnectionTimeout: settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS,
      });
      return new PostgresDatasource(settings.name, dialect, client).verified();
    },
    quoteIdentifier: quotePostgresIdentifier,
    logicalType: postgresLogicalType,
  };
  return dialect;
}
