import type { PoolSettings } from '../plugin-api/sql-dialect.js';
import type { TaskBudgets } from '../plugin-api/task-documents.js';
import type { YamlSource } from './yaml-source.js';

/** service.yaml after `${env:NAME}` substitution, defaults and path resolution. See docs/configuration.md. */
export interface ServiceConfig {
  /** Absolute path of the config file; the folder relative paths resolve against is `baseDir`. */
  file: string;
  baseDir: string;
  /** The parsed file, to point later problems (a plugin's config section) at their line. */
  source: YamlSource;
  /** Engine instance identifier reported in task snapshots; default `hostname:port`. */
  instanceId: string;
  server: ServerConfig;
  /** Absolute path of the descriptor bundle. */
  descriptors: string;
  /** Extra plugins, resolved to a folder path or a package name. */
  plugins: ExtraPluginReference[];
  datasources: Record<string, DatasourceConfig>;
  auth: AuthConfig;
  semantic: { activationFailurePolicy: 'isolate' | 'blockStartup' };
  sql: SqlConfig;
  federation: FederationConfig;
  runtime: RuntimeConfig;
  /** The Task API's capabilities, each with its budgets resolved over `runtime.budgets`. */
  capabilities: CapabilityConfig[];
  logging: { level: string };
  observe: ObserveConfig;
  actions: ActionsConfig;
  mcp: McpConfig;
}

/** `actions` (docs/actions.md): the journal of action runs, their recovery and `Idempotency-Key`. */
export interface ActionsConfig {
  /** How long an `Idempotency-Key` (and its finished run) is kept. */
  idempotencyTtlSeconds: number;
  /** How long a run stays its instance's without a heartbeat, before another may recover it. */
  leaseSeconds: number;
  /** How often recovery looks for runs left unfinished. */
  recoveryIntervalSeconds: number;
  /** Where every run is journaled; by default the database of the action's first operation. */
  journal: { datasource?: string };
}

/** The MCP endpoint (docs/mcp.md). */
export interface McpConfig {
  enabled: boolean;
  /** Where it is served on the main listener, e.g. `/mcp`. */
  path: string;
  /** Origins (`scheme://host[:port]`) a browser page may call it from, besides the endpoint's own. */
  allowedOrigins: string[];
  /** Host names (without port) a request's `Host` may give besides addresses, loopback names and this machine's name (DNS rebinding). */
  allowedHosts: string[];
  /** Sessions kept at once; past it the least recently used one is closed. */
  maxSessions: number;
}

export interface ObserveConfig {
  /** `none`: anyone may read the metrics; `admin`: a caller with a role of `auth.adminRoles`, as the admin API. */
  metrics: { auth: 'none' | 'admin' };
}

/** How a statement over several datasources of a VDB runs (docs/federation.md). */
export interface FederationConfig {
  /** Where one side of a cross-source equi-join has at most this many distinct keys, they are bound into the other side's statement. */
  semiJoinMaxKeys: number;
  /** Where the other sources' reads are at most this many rows, they are sent to the source with the most to read, which answers the statement; 0: never. */
  shipMaxRows: number;
  /** The most rows one pushed statement may read; over it 422 `result_too_large`. */
  maxSourceRows: number;
  /** The engine's memory limit, as DuckDB reads it (`512MB`, `1GiB`). */
  memoryLimit: string;
}

/** Bounds on the SQL statements the service authorizes and runs. */
export interface SqlConfig {
  /** Longer statements are refused before parsing (400 `statement_too_complex`). */
  maxStatementBytes: number;
  /** Serve the SQL front door, the PostgreSQL wire protocol (docs/sql.md). */
  enabled: boolean;
  host: string;
  port: number;
  /** Absolute paths of the PEM certificate and key answering a client's SSLRequest; without them, TLS is refused. */
  tls?: { cert: string; key: string };
  /** Connections past this many are refused with SQLSTATE 53300. */
  maxConnections: number;
  /** A connection with no statement for this long is closed. */
  idleTimeoutMs: number;
  /** Each statement's time limit; `server.requestTimeoutMs` when not set. */
  statementTimeoutMs: number;
  /** Let statements write where the grants allow it; otherwise every statement runs read-only. */
  allowWrites: boolean;
}

export interface RuntimeConfig {
  enabled: boolean;
  /** The id of a runtimeTransport plugin: `inProcess` (the reference runtime) or `http`. */
  transport: string;
  baseURL?: string;
  /** The service's credential toward the runtime; the standalone reference runtime requires it. */
  bearerToken?: string;
  timeoutMs: number;
  /** The largest runtime document the service sends (413 `request_too_large` beyond). */
  transportLimitBytes: number;
  budgets: TaskBudgets;
  /** Where `npm run runtime` serves the standalone reference runtime. */
  reference: { host: string; port: number };
}

export interface CapabilityConfig {
  name: string;
  description: string;
  budgets: TaskBudgets;
}

export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept (Node's `keepAliveTimeout`); advertised in `Keep-Alive`. */
  keepAliveTimeoutMs: number;
  /** The largest result a query endpoint answers, as the JSON of its rows; over it 422 `result_too_large`. */
  maxResultBytes: number;
  /** When set, the admin API is served only on this listener. */
  admin?: { host: string; port: number };
}

export interface ExtraPluginReference {
  /** An absolute folder holding plugin.json, or a package name resolved from the config folder. */
  source: string;
  kind: 'path' | 'package';
  config: Record<string, unknown>;
}

export interface DatasourceConfig {
  adapter: string;
  connection: Record<string, unknown>;
  pool: PoolSettings;
  /** Init scripts as written, relative to the descriptor bundle. */
  init: string[];
  /**
   * The database roles of the data roles (docs/governed-execution.md): `sync` true, the service creates them
   * and sets their privileges at startup; false, the operator did, and startup only checks they exist.
   */
  roles: { sync: boolean };
}

export interface AuthConfig {
  /** The id of an authScheme plugin. */
  scheme: string;
  adminRoles: string[];
  /** The whole `auth` section, handed to the scheme (minus `scheme` and `adminRoles`). */
  settings: Record<string, unknown>;
}
