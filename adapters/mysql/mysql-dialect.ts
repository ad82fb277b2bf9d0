import { DEFAULT_ACQUIRE_TIMEOUT_MS, createKnex, knexPool, type DatasourceSettings, type ServerConnectionFields, type SqlDialect } from '../../core/plugin-api/index.js';
import { MysqlDatasource, quoteMysqlIdentifier } from './mysql-datasource.js';
import { mysqlLogicalType } from './mysql-types.js';

/** The datasource `connection` of a mysql datasource (plugin.json holds its JSON Schema). */
/** `mysql://user:password@host:3306/db`, or the fields. */
export type MysqlConnection = ServerConnectionFields;

/** The callback connection mysql2 gives knex's pool hook. */
interface PooledConnection {
  query(sql: string, callback: (error: Error | null) => void): void;
}

export function mysqlDialect(id: string): SqlDialect {
  const dialect: SqlDialect = {
    id,
    family: 'mysql',
    async open(settings: DatasourceSettings) {
      const connection = settings.connection as MysqlConnection;
      const timeout = settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
      const client = createKnex({
        client: 'mysql2',
        connection: {
          ...(connection.connectionString === undefined
            ? { host: connection.host, port: connection.port, user: connection.user, password: connection.password, database: connection.database }
            : { uri: connection.connectionString }),
          charset: 'utf8mb4',
          // Values as the server's text: no Date in the process time zone, no rounding of BIGINT or DECIMAL.
          dateStrings: true,
          // JSON columns as their text: value-encoding parses JSON once for every driver
          jsonStrings: true,
          supportBigNumbers: true,
          bigNumberStrings: true,
          decimalNumbers: false,
          timezone: 'Z',
          connectTimeout: timeout,
        } as Record<string, unknown>,
        pool: {
          ...knexPool(settings.pool),
          // TIMESTAMP columns hold instants: read them in UTC so they encode with `Z`.
          afterCreate: (conn: PooledConnection, done: (error: Error | null, conn: PooledConnection) => void) => {
            conn.query("set time_zone = '+00:00'", (error) => done(error, conn));
          },
        },
        acquireConnectionTimeout: timeout,
      });
      return new MysqlDatasource(settings.name, dialect, client).verified();
    },
    quoteIdentifier: quoteMysqlIdentifier,
    logicalType: mysqlLogicalType,
  };
  return dialect;
}
