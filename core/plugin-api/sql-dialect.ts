import type { Knex } from 'knex';
import type { Catalog, LogicalType } from './catalog.js';

/** The SQL grammar a dialect speaks; it selects the parser for authorization and expressions. */
export type SqlFamily = 'postgres' | 'mysql' | 'mssql' | 'oracle';

/** Pool settings of `datasources.<name>.pool` in service.yaml. */
export interface PoolSettings {
  min?: number;
  max?: number;
  acquireTimeoutMs?: number;
  idleTimeoutMs?: number;
}

/** One `datasources.<name>` entry of service.yaml, resolved. */
export interface DatasourceSettings {
  /** The key under `datasources`, e.g. `retail_db`. */
  name: string;
  /** The id of the sqlDialect plugin, e.g. `pglite`. */
  adapter: string;
  /** Driver settings, already validated against the dialect manifest's `configSchema`. */
  connection: Record<string, unknown>;
  pool: PoolSettings;
  /** Absolute paths of SQL scripts run once, when an embedded database is new (ignored by servers). */
  init: string[];
  /** Folder that relative paths in `connection` resolve against (the config file's folder). */
  baseDir: string;
}

/**
 * The `connection` keys of a server datasource reached by URL or by fields (postgres, mysql): the URL, e.g.
 * `postgres://user:password@host:5432/db`, wins; the fields are used when it is absent.
 */
export interface ServerConnectionFields {
  connectionString?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
}

/** A JSON value as responses carry it. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface ResultColumn {
  name: string;
  logicalType: LogicalType;
}

export interface QueryResult {
  columns: ResultColumn[];
  /** Rows with values already encoded for JSON (core/sql/value-encoding.ts). */
  rows: Record<string, JsonValue>[];
  /** Rows returned for a query, rows affected for DML. */
  rowCount: number;
  /** True when `maxRows` cut the result short. */
  truncated: boolean;
}

export interface QueryOptions {
  /** Return at most this many rows; `truncated` tells whether more existed. */
  maxRows?: number;
}

/** Runs statements: a datasource's pool, or one transaction of it. */
export interface SqlExecutor {
  /**
   * Runs one statement with positional `?` bindings and returns typed, JSON-encoded rows.
   * Example: `query('select id from sales.orders where id = ?', [7])`.
   */
  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult>;
}

/** An open datasource. Created by a dialect, owned by the core, closed once at shutdown. */
export interface Datasource extends SqlExecutor {
  readonly name: string;
  readonly dialect: SqlDialect;
  /** The knex instance for query builders (actions build their statements with it). */
  readonly knex: Knex;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>): Promise<T>;
  /** Reads relations, columns, keys and functions of the given schemas. */
  introspect(schemas: readonly string[]): Promise<Catalog>;
  /** Resolves when the datasource answers a trivial query; rejects when it is unreachable. */
  ping(): Promise<void>;
  /** Drains and closes the pool. Safe to call twice. */
  close(): Promise<void>;
}

/** What a `sqlDialect` plugin provides. */
export interface SqlDialect {
  /** The plugin id, e.g. `postgres`. */
  readonly id: string;
  readonly family: SqlFamily;
  /**
   * True when the datasource has one connection (PGlite): the core's guard (core/sql/guarded-datasource.ts)
   * then runs its calls one at a time. Absent means pooled.
   */
  readonly singleConnection?: boolean;
  /** Opens a datasource: knex client and pool, plus init scripts where the dialect is embedded. */
  open(settings: DatasourceSettings): Promise<Datasource>;
  /** Quotes one identifier for this dialect, e.g. `"order"` or `` `order` ``. */
  quoteIdentifier(name: string): string;
  /** Maps a native type name (as introspection reports it) to its logical type. */
  logicalType(nativeType: string): LogicalType;
}
