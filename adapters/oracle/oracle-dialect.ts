import { DEFAULT_ACQUIRE_TIMEOUT_MS, createKnex, knexPool, type DatasourceSettings, type SqlDialect } from '../../core/plugin-api/index.js';
import { OracleDatasource, quoteOracleIdentifier } from './oracle-datasource.js';
import { ORACLE_SESSION_SQL, type OracleConnection } from './oracle-statement.js';
import { oracleLogicalType } from './oracle-types.js';

/** The datasource `connection` of an oracle datasource (plugin.json holds its JSON Schema). */
export interface OracleConnectionSettings {
  /** Easy Connect (`host:1521/service`) or a TNS descriptor; the host fields are used when it is absent. */
  connectString?: string;
  host?: string;
  port?: number;
  serviceName?: string;
  user?: string;
  password?: string;
}

/** Oracle through node-oracledb in thin mode (pure JavaScript: no Instant Client needed). */
export function oracleDialect(id: string): SqlDialect {
  const dialect: SqlDialect = {
    id,
    family: 'oracle',
    async open(settings: DatasourceSettings) {
      const connection = settings.connection as OracleConnectionSettings;
      const timeout = settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
      const client = createKnex({
        client: 'oracledb',
        connection: {
          user: connection.user,
          password: connection.password,
          ...(connection.connectString === undefined
            ? { host: connection.host, port: connection.port ?? 1521, database: connection.serviceName }
            : { connectString: connection.connectString }),
        } as Record<string, unknown>,
        pool: {
          ...knexPool(settings.pool),
          afterCreate: (conn: OracleConnection, done: (error: unknown, conn: OracleConnection) => void) => {
            conn.execute(ORACLE_SESSION_SQL).then(() => done(null, conn), (error: unknown) => done(error, conn));
          },
        },
        acquireConnectionTimeout: timeout,
      });
      return new OracleDatasource(settings.name, dialect, client, 'select 1 from dual').verified();
    },
    quoteIdentifier: quoteOracleIdentifier,
    logicalType: oracleLogicalType,
  };
  return dialect;
}
