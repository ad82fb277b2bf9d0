import type { FunctionPolicy } from './builtin-functions.js';
import type { Catalog, LogicalType } from './catalog.js';
import type { PlannedRole, RoleChange, RolePrivilege, RoleState, RoleStateRequest } from './database-roles.js';
import type { SqlGrammar } from './sql-grammar.js';
import type { SemanticSqlSyntax } from './semantic-query-syntax.js';
import type { DialectSyntax } from './sql-syntax.js';

/**
 * The SQL family a dialect belongs to: a label for callers (the Task API's `authorizedContext.sqlFamily`,
 * messages). What the family means for parsing, quoting and names, the dialect itself answers.
 */
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

/** A column of a result, with its logical type. */
export interface ResultColumn {
  name: string;
  logicalType: LogicalType;
}

/** The answer of one statement: columns, rows encoded for JSON, and whether a bound cut it. */
export interface QueryResult {
  columns: ResultColumn[];
  /** Rows with values already encoded for JSON (core/sql/value-encoding.ts). */
  rows: Record<string, JsonValue>[];
  /** Rows returned for a query, rows affected for DML. */
  rowCount: number;
  /**
   * The `timestamp` columns whose native type holds an instant (their values end in `Z`), by name; absent:
   * none. The SQL front door sends them as `timestamptz`. Beside `columns`, whose shape the HTTP answers share.
   */
  withTimeZone?: string[];
  /** True when `maxRows` or `maxBytes` cut the result short. */
  truncated: boolean;
  /** Which limit cut it, when one did. */
  truncatedBy?: 'maxRows' | 'maxBytes';
}

/**
 * A statement's client-side deadline as an adapter sees it (`QueryOptions.deadline`): it expires once, with
 * the 57014 error, when the limit plus the slack has passed. A plain object with one timer, not an
 * AbortSignal: an AbortController per statement (an EventTarget, its prototype set at run time, a listener
 * added and removed) cost the query route about an eighth of its instructions per request.
 */
export interface Deadline {
  /** The deadline's error once it expired; undefined before. */
  readonly expired: Error | undefined;
  /** Calls `listener` once when it expires (in a microtask if it has already); returns what stops listening. */
  onExpire(listener: (error: Error) => void): () => void;
}

/** Bounds and scope of one statement a datasource runs. */
export interface QueryOptions {
  /** Return at most this many rows; `truncated` tells whether more existed. */
  maxRows?: number;
  /**
   * Return rows only while their JSON (`JSON.stringify(rows)`, UTF-8 bytes) stays within this budget; the
   * first row past it ends the result (`truncatedBy: 'maxBytes'`). A datasource counts as rows arrive and
   * holds no more than the budget (plus the row that overran it); where it can, it then cancels the
   * statement on the server rather than reading the rest.
   */
  maxBytes?: number;
  /**
   * The statement's time limit, enforced by the server (or, for an embedded database that has none, by
   * ending the statement's worker); over it the statement fails with SQLSTATE 57014 (`query_canceled`).
   */
  timeoutMs?: number;
  /** Aborted when the request or task the statement runs for has ended: the statement is cancelled. */
  signal?: AbortSignal;
  /**
   * The statement's client-side deadline, set by the core's runtime (core/sql/datasource-runtime.ts) where
   * `timeoutMs` is: it expires, with an Error of code 57014, once the limit plus a slack has passed
   * without an answer (a server that stopped answering enforces no limit). The adapter then gives the
   * statement up, rejecting with that reason, and destroys its connection, whose state is unknown, so that
   * it is never reused. An adapter arms no timer of its own (`onDeadline` of the adapter kit listens).
   */
  deadline?: Deadline;
  /**
   * Plan the statement for this run's values, not once for every run: where the adapter prepares a statement
   * and the server may settle on one plan for all values (PostgreSQL's generic plan after five runs), it runs
   * this one unprepared. For values whose size varies by orders of magnitude (a federated plan's shipped rows,
   * docs/federation.md#shipping-the-small-side), where one plan cannot fit them all.
   */
  planEachRun?: boolean;
  /**
   * Run as a caller: under the caller's database role, read-only when the route is (docs/governed-execution.md).
   * Only the datasources of a dialect whose `capabilities.enforcesRoles` is true take it; the statements of a
   * transaction run under the transaction's scope, not their own.
   */
  scope?: ExecutionScope;
}

/**
 * Who a caller's statement runs as. The core picks the role from the caller's grants (a role the startup sync
 * created with exactly those privileges); the adapter makes the database run the statement as that role, so
 * that the database, not only the SQL analyzer, refuses what the grants do not cover.
 */
export interface ExecutionScope {
  /** The database role, as the database spells it, e.g. `vdb_retail_v1_analyst`. */
  readonly role: string;
  /** The database refuses any write (a read-only transaction): set where the route only reads. */
  readonly readOnly: boolean;
}

/**
 * How a datasource logs in as one database role, where a caller's statements run on a login of their role
 * rather than under `SET ROLE` (MySQL, MariaDB: `SqlDialect.loginPasswordSql`): the user the sync made,
 * with the password it set at this start, or the connection the operator configured for the data role
 * (`dataRoles[].connection`, the `connection` of that datasource of service.yaml).
 */
export type RoleLogin =
  | { role: string; password: string }
  | { role: string; connection: Record<string, unknown> };

/** What a login the operator configured holds itself, read through it (`Datasource.useRoleLogins`). */
export interface LoginHoldings {
  /** The planned role it stands for. */
  role: string;
  /** The account it logged in as, e.g. `'retail_analyst'@'%'`. */
  account: string;
  /** Its privileges on schemas, relations and columns: what the database shows a user of itself. */
  privileges: RolePrivilege[];
}

/** How `Datasource.transaction` runs its statements. */
export interface TransactionOptions {
  /** Every statement of the transaction runs under this scope (see `QueryOptions.scope`). */
  scope?: ExecutionScope;
  /** The time limit of each statement of the transaction (see `QueryOptions.timeoutMs`). */
  timeoutMs?: number;
  /**
   * The transaction's client-side deadline (see `QueryOptions.deadline`), re-armed by the core as each of
   * its statements starts and ends, so that BEGIN, every statement and COMMIT are covered: once aborted, the
   * adapter destroys the transaction's connection, which ends the statement waiting on it and the rollback.
   */
  deadline?: Deadline;
}

/** Runs statements: a datasource's pool, or one transaction of it. */
export interface SqlExecutor {
  /**
   * Runs one statement with positional `?` bindings and returns typed, JSON-encoded rows.
   * Example: `query('select id from sales.orders where id = ?', [7])`.
   */
  query(sql: string, bindings: readonly unknown[], options?: QueryOptions): Promise<QueryResult>;
}

/** A table as a statement names it. */
export interface TableName {
  schema: string;
  name: string;
}

/** How a `TableFilter` compares its column: the action filters' operations. */
export type TableFilterOperation =
  | 'EQUAL' | 'NOT_EQUAL' | 'GREATER_THAN' | 'GREATER_THAN_OR_EQUAL' | 'LESS_THAN' | 'LESS_THAN_OR_EQUAL' | 'LIKE'
  | 'IN' | 'NOT_IN' | 'IS_NULL' | 'IS_NOT_NULL';

/** One condition of a `TableStatement`, its value ready to bind (a list for IN / NOT_IN, none for the null tests). */
export interface TableFilter {
  column: string;
  operation: TableFilterOperation;
  value?: unknown;
}

/**
 * A statement on one table, as data: what an action runs (docs/endpoints.md#action-definitions), built into the dialect's SQL
 * by the datasource (`Datasource.buildStatement`). `exists` selects one row's presence, `first` the columns
 * of the first matching row; the filters are ANDed.
 */
export type TableStatement =
  | { kind: 'exists'; table: TableName; filters: readonly TableFilter[] }
  | { kind: 'first'; table: TableName; columns: readonly string[]; filters: readonly TableFilter[] }
  | { kind: 'insert'; table: TableName; values: Readonly<Record<string, unknown>> }
  | { kind: 'update'; table: TableName; values: Readonly<Record<string, unknown>>; filters: readonly TableFilter[] }
  | { kind: 'delete'; table: TableName; filters: readonly TableFilter[] };

/** One SQL text with its positional `?` bindings, as `SqlExecutor.query` takes them. */
export interface BuiltStatement {
  sql: string;
  bindings: unknown[];
}

/** Connections of a datasource's pool: in use, idle, and requests waiting for one. */
export interface PoolUsage {
  used: number;
  free: number;
  pending: number;
}

/** What a datasource's `ping` is bounded by. */
export interface PingOptions {
  /** The ping's client-side deadline (see `QueryOptions.deadline`). */
  deadline?: Deadline;
}

/** An open datasource. Created by a dialect, owned by the core, closed once at shutdown. */
export interface Datasource extends SqlExecutor {
  readonly name: string;
  readonly dialect: SqlDialect;
  /**
   * The statement in the dialect's SQL, identifiers quoted and values bound, never spliced. Runs nothing.
   * Example: `{ kind: 'delete', table: { schema: 'sales', name: 'orders' }, filters: [{ column: 'id', operation: 'EQUAL', value: 7 }] }`.
   */
  buildStatement(statement: TableStatement): BuiltStatement;
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it rejects. */
  transaction<T>(work: (transaction: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Reads relations, columns, keys and functions of the given schemas. */
  introspect(schemas: readonly string[]): Promise<Catalog>;
  /** Resolves when the datasource answers a trivial query; rejects when it is unreachable. */
  ping(options?: PingOptions): Promise<void>;
  /** The usage of the datasource's connection pool, read without a statement; absent where it has none. */
  poolUsage?(): PoolUsage | undefined;
  /** Drains and closes the pool. Safe to call twice. */
  close(): Promise<void>;
  /**
   * For an embedded database whose session would otherwise be a superuser (PGlite): once startup has run
   * the init scripts and synced the data roles, reopen the session as a non-superuser login that is a
   * member of `memberOf` (database role names) and nothing else, so that no caller's statement can regain
   * superuser rights. Absent on servers, whose login is configured.
   */
  restrictSession?(memberOf: readonly string[]): Promise<void>;
  /**
   * Where the dialect runs a caller's statements on a login of their role (`SqlDialect.loginPasswordSql`):
   * after the sync, the logins of the planned roles, replacing any given before. A statement under a scope
   * whose role has no login is refused (403 `forbidden`). Rejects, naming the role, when a login cannot
   * connect. Answers what each login the operator configured (`connection`) holds, for drift reports.
   */
  useRoleLogins?(logins: readonly RoleLogin[]): Promise<LoginHoldings[]>;
  /**
   * Where the database speaks PostgreSQL's wire protocol (v3): runs one statement of the SQL front door as
   * the client sent it, on a connection already set to `options.scope`, and hands the backend's answer
   * messages to `options.send` as they are (docs/sql.md#forwarding-a-vdb-on-postgresql). Absent elsewhere: the door then runs the
   * statement through `query` and encodes the rows itself.
   */
  forwardWire?(statement: WireStatement, options: WireForwardOptions): Promise<WireForwardOutcome>;
  /**
   * Where the database has server-side cursors and more than one connection (PostgreSQL): opens a cursor
   * over one query (positional `?` bindings) on a connection set to `options.scope`, with `options.timeoutMs`
   * per fetch, held in a transaction of its own until the cursor is closed, so that rows are read from the
   * server as they are fetched (the SQL front door's `DECLARE … CURSOR`, docs/sql.md#cursors). Absent
   * elsewhere: the door then reads the query's result whole, within the result budget.
   */
  openCursor?(sql: string, bindings: readonly unknown[], options: CursorOptions): Promise<DatasourceCursor>;
}

/** A cursor's bounds and scope (`Datasource.openCursor`). */
export interface CursorOptions extends QueryOptions {
  /**
   * Every row will be read (a federated plan's pushed statement): the database plans the query for all its
   * rows, not for the first ones a client may stop after (PostgreSQL: `cursor_tuple_fraction = 1`).
   */
  allRows?: boolean;
}

/** A query's rows on the database, read a batch at a time (`Datasource.openCursor`). */
export interface DatasourceCursor {
  /** The result's columns, known once the cursor is open. */
  readonly columns: ResultColumn[];
  /** `withTimeZone` of the cursor's results (see QueryResult). */
  readonly withTimeZone?: string[];
  /**
   * The next rows, at most `count` (Infinity: all that are left): fewer means the end was reached. Within
   * `options.maxBytes` and `options.signal` as `query` is; a cut or failed fetch leaves the cursor unusable.
   */
  fetch(count: number, options: Pick<QueryOptions, 'maxBytes' | 'signal' | 'deadline'>): Promise<QueryResult>;
  /** Ends the cursor and its transaction and gives the connection back. Never rejects; safe to call twice. */
  close(): Promise<void>;
}

/** One statement of a PostgreSQL-protocol client, forwarded by `Datasource.forwardWire` (the client's statement and portal names stay the door's). */
export interface WireStatement {
  /** The text as the client sent it (`$n` placeholders), already authorized. */
  text: string;
  /** Parse's parameter type OIDs, as the client declared them (0: the server infers). */
  parameterTypes: readonly number[];
  /**
   * `statement`: only Parse and Describe of the statement (ParameterDescription, then RowDescription or
   * NoData); `portal`: Bind, Describe of the portal, and Execute when `execute`; `rows`: Bind and Execute.
   */
  describe: 'statement' | 'portal' | 'rows';
  /** With `portal`: also Execute (every row) after the Describe. */
  execute?: boolean;
  /** Bind's values, each as the client sent it in its format (0 text, 1 binary): bound, never spliced. */
  parameters?: readonly { value: Buffer | null; format: number }[];
  /** Bind's result format codes. */
  resultFormats?: readonly number[];
}

/** Bounds, scope and the answer channel of one statement forwarded over the PostgreSQL wire protocol. */
export interface WireForwardOptions {
  scope?: ExecutionScope;
  timeoutMs?: number;
  /** Aborted: the statement is cancelled on the server; the promise rejects with the server's 57014. */
  signal?: AbortSignal;
  /** The statement's client-side deadline (see `QueryOptions.deadline`). */
  deadline?: Deadline;
  /** DataRow bytes (whole messages) at most: past them the statement is cancelled and the outcome is `cut`. */
  maxBytes: number;
  /**
   * Receives each answer message (RowDescription, ParameterDescription, NoData, DataRow, CommandComplete,
   * EmptyQueryResponse) whole, as the backend framed it; not ParseComplete, BindComplete, notices or
   * ReadyForQuery. An ErrorResponse rejects the promise with an Error carrying its fields as pg's do
   * (`code`, `detail`, `table`, `column`, …).
   */
  send(message: Buffer): void;
}

/** `cut`: the rows passed `maxBytes`, the statement was cancelled, what was sent is incomplete. */
export type WireForwardOutcome = 'done' | 'cut';

/**
 * What the core may rely on a dialect's server doing. Further capabilities (server-side cancel, cursors)
 * belong here as flags, their operations as methods of `DialectBase`.
 */
export interface DialectCapabilities {
  /**
   * True when the server plans `explain <statement>` with null bindings (PostgreSQL, MySQL): endpoint queries
   * are then checked against the database at startup; otherwise only per request.
   */
  readonly explain: boolean;
  /**
   * True when the database enforces the data roles (docs/governed-execution.md): the dialect syncs one
   * database role per data role (`DialectBase.readRoles`, `roleChangeSql`) and its datasources run a
   * statement under `QueryOptions.scope`. False (SQL Server, Oracle for now): the SQL analyzer is the
   * only gate and statements run as the service's login.
   */
  readonly enforcesRoles: boolean;
  /**
   * True when the dialect's text is PostgreSQL's (its grammar, quoting, name folding and built-ins): a
   * statement over several datasources of a VDB is PostgreSQL's dialect whatever the VDB's default datasource
   * (docs/federation.md), and is authorized in an installed dialect that says so. Absent: false.
   */
  readonly postgresqlText?: boolean;
}

/**
 * What a `sqlDialect` plugin provides. Adapters extend `DialectBase` (dialect-base.ts), which answers most of
 * it with defaults; the core asks the dialect and never branches on its family.
 */
export interface SqlDialect extends DialectSyntax {
  /** The plugin id, e.g. `postgres`. */
  readonly id: string;
  /** A label, e.g. for the Task API's `authorizedContext.sqlFamily`; the core branches on the members below, never on it. */
  readonly family: SqlFamily;
  /** What the core may rely on the server doing, e.g. planning `explain <statement>`. */
  readonly capabilities: DialectCapabilities;
  /** The parser the authorizer and the semantic expression analysis use for this dialect's SQL. */
  readonly grammar: SqlGrammar;
  /** Which built-in functions statements may call (an allow-list), and where built-ins live. */
  readonly functionPolicy: FunctionPolicy;
  /** The SQL forms the semantic query compiler writes differently per server (time grains, NULL-safe equality, ...). */
  readonly semanticSyntax: SemanticSqlSyntax;
  /** Opens a datasource: the driver's client and pool, plus init scripts where the dialect is embedded. */
  open(settings: DatasourceSettings): Promise<Datasource>;
  /** Maps a native type name (as introspection reports it) to its logical type. */
  logicalType(nativeType: string): LogicalType;
  /**
   * A read-only statement rewritten so that the server refuses any row over a size (the text's last `?`),
   * before sending it; undefined where the dialect has none. See `DialectBase.boundRowBytes`.
   */
  boundRowBytes(sql: string): string | undefined;
  /**
   * Reads what the database holds for the planned roles (docs/governed-execution.md), inside the
   * transaction `executor` runs. Only where `capabilities.enforcesRoles`.
   */
  readRoles(executor: SqlExecutor, request: RoleStateRequest): Promise<RoleState>;
  /** The statements of one change, identifiers quoted: the sync runs them, `validate` shows them. */
  roleChangeSql(change: RoleChange): string[];
  /** The longest database role name the server takes, in bytes (PostgreSQL 63, MySQL 32): longer planned names are cut and hashed. */
  readonly maxRoleNameBytes: number;
  /** The planned roles as this database holds them, e.g. without schema usage or memberships where it has none. See `DialectBase.rolePlan`. */
  rolePlan<T extends PlannedRole>(roles: readonly T[]): T[];
  /**
   * Where a caller's statements run on a login per role: the statement that sets a planned role's password
   * (`?` its name, then the password) and lets it log in. Undefined where the session switches roles.
   */
  loginPasswordSql(): string | undefined;
  /**
   * Where `loginPasswordSql` is defined: where the passwords come from, so that every instance on one database
   * sets the same ones (a second instance's start would otherwise lock the first out of the logins). The
   * sync, after its lock, runs `setupSql`, then `keepSql` with one value (32 random bytes, hex), which it keeps
   * only where no secret is kept yet, then `secretSql`, which answers one row `secret`: the secret kept in
   * the database, readable by the service's login only, from which each role's password is derived.
   * Absent, each start sets random passwords: one instance per database.
   */
  readonly roleLoginSecret?: RoleLoginSecretSql;
  /** Statements that end a sync, after its changes (MySQL: release the lock `readRoles` took, which outlives transactions). */
  roleSyncEndSql(): string[];
  /**
   * The service's journal of action runs on this database (docs/actions.md#the-journal), written in the same
   * transaction as each operation; absent where the dialect keeps none (its actions then run unjournaled).
   */
  readonly actionJournal?: ActionJournalSql;
  /**
   * How a federated plan's pushed statements compare as PostgreSQL does on this server (docs/federation.md);
   * absent, only the columns and the predicates that need neither form are pushed to its datasources.
   */
  readonly pushdown?: PushdownSyntax;
}

/** The SQL of the secret the passwords of the data roles' logins are derived from (`SqlDialect.roleLoginSecret`). */
export interface RoleLoginSecretSql {
  /** What holds the secret, created where missing. */
  setupSql: readonly string[];
  /** Keeps its one `?`, a random value, as the secret where none is kept yet. */
  keepSql: string;
  /** Answers one row, `secret`. */
  secretSql: string;
}

/** The forms a pushed statement of a federated plan writes in the server's dialect. */
export interface PushdownSyntax {
  /** A text column (quoted already) compared byte-wise, as PostgreSQL's collation "C" compares, e.g. `name COLLATE "C"`. */
  byteWiseText(column: string): string;
  /** `column` equal to one of `values`: the text (`?` per bound value) and the bound values, e.g. `= ANY(?)` with one array. */
  anyOf(column: string, values: readonly unknown[]): { sql: string; bindings: unknown[] };
}

/**
 * The SQL of a dialect's action journal: a schema of the service's own, its tables readable by the service's
 * login alone, and one function that a caller's role may call but that refuses a call without the journal's
 * secret, so that the role can neither read nor forge the journal.
 */
export interface ActionJournalSql {
  /** Creates what is missing, in one transaction, as the service's login; safe from several instances at once. */
  readonly setupSql: readonly string[];
  /** One row, column `secret`: the secret every call passes, read as the service's login. */
  readonly secretSql: string;
  /**
   * Calls the journal: bindings the secret, the command and its payload as JSON text; one row, column `result`,
   * the answer as JSON text or null.
   */
  readonly callSql: string;
  /** Where a caller's statements run on a login per role: what lets that login call the journal. */
  grantSql(role: string): string[];
}
