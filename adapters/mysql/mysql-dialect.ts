import type { Knex } from 'knex';
import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, nodeSqlParserGrammar,
  type Datasource, type DatasourceSettings, type DialectCapabilities, type LogicalType, type PlannedRole,
  type PlaceholderStyle, type PushdownSyntax, type RoleChange, type RoleLogin, type RoleState, type RoleStateRequest, type ServerConnectionFields,
  type SqlExecutor, type SqlGrammar, type SqlLexicon,
} from '../../core/plugin-api/adapter-kit.js';
import { MYSQL_SEMANTIC_SYNTAX } from './mysql-semantic-syntax.js';
import { MysqlDatasource } from './mysql-datasource.js';
import { MYSQL_FUNCTIONS } from './mysql-functions.js';
import { HOST, MYSQL_LOGIN_SECRET, MYSQL_PASSWORD_SQL, MYSQL_SYNC_END, mysqlRoleChangeSql, mysqlRolePlan, readMysqlRoles } from './mysql-roles.js';
import { mysqlActionJournal } from './mysql-action-journal.js';
import { mysqlLogicalType } from './mysql-types.js';

/** The datasource `connection` of a mysql datasource (plugin.json holds its JSON Schema). */
/** `mysql://user:password@host:3306/db`, or the fields. */
export type MysqlConnection = ServerConnectionFields;

/** The callback connection mysql2 gives knex's pool hook. */
interface PooledConnection {
  query(sql: string, callback: (error: Error | null) => void): void;
}

/** Runs `statements` one after another on a new connection, then hands it to the pool. */
function setUp(statements: readonly string[]) {
  return (conn: PooledConnection, done: (error: Error | null, conn: PooledConnection) => void): void => {
    const next = (index: number): void => {
      const sql = statements[index];
      if (sql === undefined) return done(null, conn);
      conn.query(sql, (error) => (error ? done(error, conn) : next(index + 1)));
    };
    next(0);
  };
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

/** `mysql://u:p@host:3306/?ssl=…` for `mysql://u:p@host:3306/db?ssl=…`. */
function withoutDatabase(connectionString: string): string {
  const url = new URL(connectionString);
  url.pathname = '/';
  return url.toString();
}

/** MySQL and MariaDB through mysql2, parsed with node-sql-parser's MySQL grammar. */
export class MysqlDialect extends DialectBase {
  readonly family = 'mysql';
  readonly lexicon = MYSQL_LEXICON;
  readonly placeholders = MYSQL_PLACEHOLDERS;
  override readonly capabilities: DialectCapabilities = { explain: true, enforcesRoles: true };
  override readonly identifierQuotes = ['`', '`'] as const;
  override readonly functionPolicy = MYSQL_FUNCTIONS;
  /** MySQL's limit on user names (MariaDB takes 80): one name on both. */
  override readonly maxRoleNameBytes = 32;
  override readonly semanticSyntax = MYSQL_SEMANTIC_SYNTAX;
  /**
   * Text as its UTF-8 bytes, whose order is the order of code points (PostgreSQL's "C"), whatever the
   * column's collation (which may fold case or pad spaces); the keys of a dependent join as an IN list.
   */
  readonly pushdown: PushdownSyntax = {
    byteWiseText: (column) => `CAST(${column} AS BINARY)`,
    anyOf: (column, values) => (values.length === 0 ? { sql: '1 = 0', bindings: [] } : { sql: `${column} IN (${values.map(() => '?').join(', ')})`, bindings: [...values] }),
  };

  protected createGrammar(): SqlGrammar {
    return nodeSqlParserGrammar(this, {
      database: 'MySQL', label: 'MySQL', load: () => import('node-sql-parser/build/mysql.js'), textHazard: mysqlTextHazard,
    });
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
    const timeout = settings.pool.acquireTimeoutMs ?? DEFAULT_ACQUIRE_TIMEOUT_MS;
    const config = (connection: MysqlConnection, setup: readonly string[]): Knex.Config => ({
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
        afterCreate: setUp(["set time_zone = '+00:00'", ...setup]),
      },
      acquireConnectionTimeout: timeout,
    });
    const own = settings.connection as MysqlConnection;
    const openLogin = (login: RoleLogin, setup: readonly string[]): Knex => {
      if (!('password' in login)) return createKnex(config(login.connection as MysqlConnection, setup));
      // the sync's users: the datasource's server as the user with this start's password, without a default
      // database (a user may hold nothing in it; every name a caller's statement uses is qualified)
      const server = own.connectionString === undefined ? { ...own, database: undefined } : { connectionString: withoutDatabase(own.connectionString) };
      const base = config(server, setup);
      // mysql2 lets `user` and `password` override those of the `uri`
      return createKnex({ ...base, connection: { ...(base.connection as Record<string, unknown>), user: login.role, password: login.password } });
    };
    return new MysqlDatasource(settings.name, this, createKnex(config(own, [])), openLogin).verified();
  }

  override readRoles(executor: SqlExecutor, request: RoleStateRequest): Promise<RoleState> {
    return readMysqlRoles(executor, request);
  }

  override roleChangeSql(change: RoleChange): string[] {
    return mysqlRoleChangeSql(change, (name) => this.quoteIdentifier(name));
  }

  override rolePlan<T extends PlannedRole>(roles: readonly T[]): T[] {
    return mysqlRolePlan(roles);
  }

  readonly actionJournal = mysqlActionJournal((name) => this.quoteIdentifier(name), HOST);

  override loginPasswordSql(): string {
    return MYSQL_PASSWORD_SQL;
  }

  readonly roleLoginSecret = MYSQL_LOGIN_SECRET;

  override roleSyncEndSql(): string[] {
    return MYSQL_SYNC_END;
  }

  logicalType(nativeType: string): LogicalType {
    return mysqlLogicalType(nativeType);
  }
}
