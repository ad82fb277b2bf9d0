import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, nodeSqlParserGrammar,
  type Datasource, type DatasourceSettings, type DialectCapabilities, type LogicalType,
  type PlaceholderStyle, type ServerConnectionFields, type SqlGrammar, type SqlLexicon,
} from '../../core/plugin-api/index.js';
import { MYSQL_SEMANTIC_SYNTAX } from './mysql-semantic-syntax.js';
import { MysqlDatasource } from './mysql-datasource.js';
import { MYSQL_FUNCTIONS } from './mysql-functions.js';
import { mysqlLogicalType } from './mysql-types.js';

/** The datasource `connection` of a mysql datasource (plugin.json holds its JSON Schema). */
/** `mysql://user:password@host:3306/db`, or the fields. */
export type MysqlConnection = ServerConnectionFields;

/** The callback connection mysql2 gives knex's pool hook. */
interface PooledConnection {
  query(sql: string, callback: (error: Error | null) => void): void;
}

const MYSQL_LEXICON: SqlLexicon = {
  stringBackslash: 'always', doubleQuotes: 'string', backticks: true, brackets: false, hashComments: true,
  dashCommentNeedsSpace: true, nestedBlockComments: false, dollarQuotes: false, refuseQQuotes: false,
  refuseExecutableComments: true,
};

/** The server receives `?` itself, and mysql2 formats every `?`: a literal one cannot be written. */
const MYSQL_PLACEHOLDERS: PlaceholderStyle = { escapedQuestionMark: false };

/** Where node-sql-parser's MySQL grammar would see less than the server runs. */
function mysqlTextHazard(sql: string): string | undefined {
  // `/*! … */` and `/*M! … */` run as SQL on MySQL and MariaDB; hints can change session settings.
  if (/\/\*(M?!|\+)/.test(sql)) return 'a MySQL executable comment or optimizer hint';
  // MySQL starts a comment at `--` only when whitespace follows; `--x` is minus minus x.
  if (/--(?![ \t\r\n])/.test(sql)) return '`--` without a following space, which MySQL does not read as a comment';
  return undefined;
}

/** MySQL and MariaDB through mysql2, parsed with node-sql-parser's MySQL grammar. */
export class MysqlDialect extends DialectBase {
  readonly family = 'mysql';
  readonly lexicon = MYSQL_LEXICON;
  readonly placeholders = MYSQL_PLACEHOLDERS;
  override readonly capabilities: DialectCapabilities = { singleConnection: false, explain: true, enforcesRoles: false };
  override readonly identifierQuotes = ['`', '`'] as const;
  override readonly functionPolicy = MYSQL_FUNCTIONS;
  override readonly semanticSyntax = MYSQL_SEMANTIC_SYNTAX;

  protected createGrammar(): SqlGrammar {
    return nodeSqlParserGrammar(this, {
      database: 'MySQL', label: 'MySQL', load: () => import('node-sql-parser/build/mysql.js'), textHazard: mysqlTextHazard,
    });
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
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
    return new MysqlDatasource(settings.name, this, client).verified();
  }

  logicalType(nativeType: string): LogicalType {
    return mysqlLogicalType(nativeType);
  }
}
