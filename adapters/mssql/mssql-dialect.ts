import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, nodeSqlParserGrammar,
  type Datasource, type DatasourceSettings, type LogicalType, type PlaceholderStyle, type PlannedRole, type RoleChange,
  type SqlGrammar, type SqlLexicon, withoutSchemaPrivileges,
} from '../../core/plugin-api/adapter-kit.js';
import { mssqlRoleChangeSql } from './mssql-roles.js';
import { MSSQL_SEMANTIC_SYNTAX } from './mssql-semantic-syntax.js';
import { MssqlDatasource } from './mssql-datasource.js';
import { MSSQL_FUNCTIONS } from './mssql-functions.js';
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

const MSSQL_LEXICON: SqlLexicon = {
  stringBackslash: 'never', doubleQuotes: 'identifier', backticks: false, brackets: true, hashComments: false,
  dashCommentNeedsSpace: false, nestedBlockComments: true, dollarQuotes: false, refuseQQuotes: false,
  refuseExecutableComments: false,
};

/** knex's mssql client names the bound values `@p0`, `@p1`… and reads `\?` as a literal `?`. */
const MSSQL_PLACEHOLDERS: PlaceholderStyle = { numbered: (n) => `@p${n - 1}`, escapedQuestionMark: true };

/**
 * SQL Server nests block comments, node-sql-parser's T-SQL grammar does not: it would end one earlier. The
 * grammar reads `@@VERSION` as a column `@` named `@VERSION`, where SQL Server calls a function of the
 * server's state: `@@` is refused anywhere, in a string too (bind such a value as a parameter).
 */
function mssqlTextHazard(sql: string): string | undefined {
  if (hasNestedBlockComment(sql)) return 'a nested block comment, which SQL Server ends later than the parser';
  return sql.includes('@@') ? '`@@`, a server function (`@@VERSION`) the T-SQL grammar misreads' : undefined;
}

function hasNestedBlockComment(sql: string): boolean {
  for (let open = sql.indexOf('/*'); open !== -1; open = sql.indexOf('/*', open + 2)) {
    const close = sql.indexOf('*/', open + 2);
    if (close === -1) return false;
    if (sql.slice(open + 2, close).includes('/*')) return true;
    open = close;
  }
  return false;
}

/** SQL Server through the mssql driver, parsed with node-sql-parser's TransactSQL grammar. */
export class MssqlDialect extends DialectBase {
  readonly family = 'mssql';
  readonly lexicon = MSSQL_LEXICON;
  readonly placeholders = MSSQL_PLACEHOLDERS;
  override readonly identifierQuotes = ['[', ']'] as const;
  override readonly functionPolicy = MSSQL_FUNCTIONS;
  override readonly semanticSyntax = MSSQL_SEMANTIC_SYNTAX;

  protected createGrammar(): SqlGrammar {
    return nodeSqlParserGrammar(this, {
      database: 'TransactSQL', label: 'T-SQL', load: () => import('node-sql-parser/build/transactsql.js'), textHazard: mssqlTextHazard,
    });
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
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
    return new MssqlDatasource(settings.name, this, client).verified();
  }

  /** The mapping of the data roles (docs/governed-execution.md), not run yet: `capabilities.enforcesRoles` is false. */
  override roleChangeSql(change: RoleChange): string[] {
    return mssqlRoleChangeSql(change, (name) => this.quoteIdentifier(name));
  }

  override rolePlan<T extends PlannedRole>(roles: readonly T[]): T[] {
    return withoutSchemaPrivileges(roles);
  }

  logicalType(nativeType: string): LogicalType {
    return mssqlLogicalType(nativeType);
  }
}
