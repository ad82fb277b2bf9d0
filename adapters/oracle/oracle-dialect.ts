import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, nodeSqlParserGrammar,
  type Datasource, type DatasourceSettings, type LogicalType, type PlaceholderStyle, type PlannedRole, type RoleChange,
  type SqlGrammar, type SqlLexicon, withoutSchemaPrivileges,
} from '../../core/plugin-api/adapter-kit.js';
import { oracleRoleChangeSql } from './oracle-roles.js';
import { ORACLE_SEMANTIC_SYNTAX } from './oracle-semantic-syntax.js';
import { OracleDatasource } from './oracle-datasource.js';
import { ORACLE_FUNCTIONS } from './oracle-functions.js';
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

const ORACLE_LEXICON: SqlLexicon = {
  stringBackslash: 'never', doubleQuotes: 'identifier', backticks: false, brackets: false, hashComments: false,
  dashCommentNeedsSpace: false, nestedBlockComments: false, dollarQuotes: false, refuseQQuotes: true,
  refuseExecutableComments: false,
};

/** knex's Oracle client numbers every `?` as `:1`, `:2`…: it has no `\?` escape. */
const ORACLE_PLACEHOLDERS: PlaceholderStyle = { numbered: (n) => `:${n}`, escapedQuestionMark: false };

/**
 * Unquoted names fold to upper case, which is how they are matched; the parser does not say which names
 * were quoted, so a quoted name that is not upper case (it would name another object) is refused.
 */
function oracleTextHazard(sql: string): string | undefined {
  return (sql.match(/"[^"]*"/g) ?? []).some((quoted) => quoted !== quoted.toUpperCase())
    ? 'a quoted identifier that is not upper case'
    : undefined;
}

/**
 * Oracle through node-oracledb in thin mode (pure JavaScript: no Instant Client needed). No parser reads
 * Oracle SQL reliably: node-sql-parser's DB2 grammar is the closest (FETCH FIRST, OFFSET … ROWS, DUAL, double
 * quotes for identifiers); PL/SQL blocks and Oracle-only syntax (`(+)` joins, CONNECT BY) do not parse and
 * are refused. Names are matched without case once folded, as quoted ones must already be upper case.
 */
export class OracleDialect extends DialectBase {
  readonly family = 'oracle';
  readonly lexicon = ORACLE_LEXICON;
  readonly placeholders = ORACLE_PLACEHOLDERS;
  override readonly unquotedCase = 'upper';
  override readonly functionPolicy = ORACLE_FUNCTIONS;
  override readonly semanticSyntax = ORACLE_SEMANTIC_SYNTAX;

  protected createGrammar(): SqlGrammar {
    return nodeSqlParserGrammar(this, {
      database: 'DB2',
      label: 'Oracle (DB2 grammar)',
      load: () => import('node-sql-parser/build/db2.js'),
      // DB2's grammar reads named binds only, which mean the same here.
      placeholder: (n) => `:p${n}`,
      textHazard: oracleTextHazard,
    });
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
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
    return new OracleDatasource(settings.name, this, client, 'select 1 from dual').verified();
  }

  /** The mapping of the data roles (docs/governed-execution.md), not run yet: `capabilities.enforcesRoles` is false. */
  override roleChangeSql(change: RoleChange): string[] {
    return oracleRoleChangeSql(change, (name) => this.quoteIdentifier(name));
  }

  override rolePlan<T extends PlannedRole>(roles: readonly T[]): T[] {
    return withoutSchemaPrivileges(roles);
  }

  logicalType(nativeType: string): LogicalType {
    return oracleLogicalType(nativeType);
  }
}
