import { DEFAULT_ACQUIRE_TIMEOUT_MS, createKnex, knexPool, type DatasourceSettings, type SqlDialect } from '../../core/plugin-api/index.js';
import { MssqlDatasource, quoteMssqlIdentifier } from './mssql-datasource.js';
import { mssqlLogicalType } from './mssql-types.js';

/** The datasource `connection` of an mssql datasource (plugin.json holds its JSON Schema). */
export interface MssqlConnection {
  host: string;
  port?: number;
  /** A named instance (SQL Browser lookup); the port is then ignored. */
  instanceName?: string;
  user?: string;
  password?: string;
  database?: string;
  /** Encrypt the connection (default true). */
  encrypt?: boolean;
  /** Accept a self-signed server certificate (default false). */
  trustServerCertificate?: boolean;
}

export function mssqlDialect(id: string): SqlDialect {
  const dialect: SqlDialect = {
    id,
    family: 'mssql',
    async open(settings: DatasourceSettings) {
      // Validated against plugin.json's configSchema by the core.
      const connection = settings.connection as unknown as MssqlConnection;
      const timeout = settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
      const client = createKnex({
        client: 'mssql',
        connection: {
          server: connection.host,
          ...(connection.port === undefined ? {} : { port: connection.port }),
          user: connection.user,
          password: connection.password,
          database: connection.database,
          connectionTimeout: timeout,
          options: {
            encrypt: connection.encrypt ?? true,
            trustServerCertificate: connection.trustServerCertificate ?? false,
            ...(connection.instanceName === undefined ? {} : { instanceName: connection.instanceName }),
            // Dates carry their wall-clock time in the UTC fields (core/sql/value-encoding.ts).
            useUTC: true,
            appName: 'vdb-service',
          },
        } as Record<string, unknown>,
        pool: knexPool(settings.pool),
        acquireConnectionTimeout: timeout,
      });
      return new MssqlDatasource(settings.name, dialect, client).verified();
    },
    quoteIdentifier: quoteMssqlIdentifier,
    logicalType: mssqlLogicalType,
  };
  return dialect;
}
