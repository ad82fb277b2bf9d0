import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, libpgQueryGrammar,
  type Datasource, type DatasourceSettings, type DialectCapabilities, type LogicalType, type PlaceholderStyle,
  type ServerConnectionFields, type SqlGrammar, type SqlLexicon,
} from '../../core/plugin-api/index.js';
import { PostgresDatasource } from './postgres-datasource.js';
import { POSTGRES_FUNCTIONS } from './postgres-functions.js';
import { postgresLogicalType, postgresTypeParsers } from './postgres-types.js';

/** The datasource `connection` of a postgres datasource (plugin.json holds its JSON Schema). */
export interface PostgresConnection extends ServerConnectionFields {
  /** Use TLS; `true` verifies the server certificate. */
  ssl?: boolean;
}

const POSTGRES_LEXICON: SqlLexicon = {
  stringBackslash: 'e-prefix', doubleQuotes: 'identifier', backticks: false, brackets: false, hashComments: false,
  dashCommentNeedsSpace: false, nestedBlockComments: true, dollarQuotes: true, refuseQQuotes: false,
  refuseExecutableComments: false,
};

/** knex's pg client numbers the bound values and reads `\?` as a literal `?`. */
const POSTGRES_PLACEHOLDERS: PlaceholderStyle = { numbered: (n) => `$${n}`, escapedQuestionMark: true };

/** PostgreSQL: parsed by its own grammar (libpg-query), which folds unquoted names, so names match exactly. */
export class PostgresDialect extends DialectBase {
  readonly family = 'postgres';
  readonly lexicon = POSTGRES_LEXICON;
  readonly placeholders = POSTGRES_PLACEHOLDERS;
  override readonly capabilities: DialectCapabilities = { singleConnection: false, explain: true };
  override readonly unquotedCase = 'lower';
  override readonly caseInsensitiveNames = false;
  override readonly functionPolicy = POSTGRES_FUNCTIONS;

  protected createGrammar(): SqlGrammar {
    return libpgQueryGrammar(this);
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
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
    return new PostgresDatasource(settings.name, this, client).verified();
  }

  logicalType(nativeType: string): LogicalType {
    return postgresLogicalType(nativeType);
  }
}
