import type { Knex } from 'knex';
import {
  DEFAULT_ACQUIRE_TIMEOUT_MS, DialectBase, createKnex, knexPool, libpgQueryGrammar,
  ROW_TOO_LARGE_MARK, type Datasource, type DatasourceSettings, type DialectCapabilities, type LogicalType, type PlaceholderStyle, type PushdownSyntax,
  type RoleChange, type RoleState, type RoleStateRequest, type ServerConnectionFields, type SqlExecutor, type SqlGrammar, type SqlLexicon,
} from '../../core/plugin-api/adapter-kit.js';
import pg from 'pg';
import { POSTGRES_ACTION_JOURNAL } from './postgres-action-journal.js';
import { PostgresDatasource, type ScopeOpeners } from './postgres-datasource.js';
import { POSTGRES_FUNCTIONS } from './postgres-functions.js';
import { postgresRoleChangeSql, readPostgresRoles } from './postgres-roles.js';
import { postgresLogicalType, postgresTypeParsers } from './postgres-types.js';
import { ScopePool } from './scope-pool.js';

/** How long an idle connection of a scope's pool stays open: tarn's default, as for the login's pool. */
const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** The part of a pg client a pool's `afterCreate` uses. */
interface PgConnection {
  query(query: { text: string; values: unknown[] }, callback: (error: Error | undefined) => void): void;
}

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
  override readonly capabilities: DialectCapabilities = { explain: true, enforcesRoles: true, postgresqlText: true };
  override readonly unquotedCase = 'lower';
  override readonly caseInsensitiveNames = false;
  override readonly functionPolicy = POSTGRES_FUNCTIONS;
  readonly actionJournal = POSTGRES_ACTION_JOURNAL;
  /** Text in collation "C" whatever the column's; the keys of a dependent join as one bound array. */
  readonly pushdown: PushdownSyntax = {
    byteWiseText: (column) => `${column} COLLATE "C"`,
    anyOf: (column, values) => ({ sql: `${column} = ANY(?)`, bindings: [[...values]] }),
  };

  protected createGrammar(): SqlGrammar {
    return libpgQueryGrammar(this);
  }

  /**
   * The statement as a subquery, each row measured as text on the server; over the limit, a cast that fails
   * (22P02) names the mark. The cast depends on the row so the planner cannot fold it; the newline ends a
   * trailing `--` comment of the statement.
   */
  override boundRowBytes(sql: string): string {
    const size = 'pg_catalog.octet_length(row(vdb_result.*)::text)';
    return `select vdb_result.* from (\n${withoutFinalSemicolon(sql)}\n) as vdb_result `
      + `where case when ${size} > ? then pg_catalog.int4('${ROW_TOO_LARGE_MARK}:' || ${size}) > 0 else true end`;
  }

  async open(settings: DatasourceSettings): Promise<Datasource> {
    const connection = settings.connection as PostgresConnection;
    const config: Knex.Config = {
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
    };
    // the pools of a scope: each new connection is set once to the scope's role, read-only mode and time limit
    const scopes: ScopeOpeners = {
      statements: (setup) => new ScopePool({
        ...(config.connection as pg.ClientConfig),
        max: settings.pool.max ?? 10,
        idleTimeoutMillis: settings.pool.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      }, setup),
      transactions: (setup) => createKnex({
        ...config,
        pool: {
          ...knexPool(settings.pool),
          afterCreate: (raw: PgConnection, done: (error: Error | null, raw: PgConnection) => void) => {
            raw.query({ text: setup.sql, values: [...setup.bindings] }, (error) => done(error ?? null, raw));
          },
        },
      }),
    };
    return new PostgresDatasource(settings.name, this, createKnex(config), scopes).verified();
  }

  override readRoles(executor: SqlExecutor, request: RoleStateRequest): Promise<RoleState> {
    return readPostgresRoles(executor, request);
  }

  override roleChangeSql(change: RoleChange): string[] {
    return postgresRoleChangeSql(change, (name) => this.quoteIdentifier(name));
  }

  logicalType(nativeType: string): LogicalType {
    return postgresLogicalType(nativeType);
  }
}

/** The statement without the `;` that may end it, before trailing blanks and comments (kept: they are inert). */
function withoutFinalSemicolon(sql: string): string {
  return sql.replace(/;((?:\s|--[^\n]*|\/\*[\s\S]*?\*\/)*)$/, '$1');
}
