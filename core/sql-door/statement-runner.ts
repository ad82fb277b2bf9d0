/**
 * A connection's statements for the VDB, through the same two gates as every route
 * (docs/governed-execution.md): the analyzer authorizes the text in the dialect of the VDB's datasource
 * when it is prepared, then each run goes through `callerExecutor`, as the caller's database role,
 * read-only unless `sql.allowWrites`, with the statement time limit. Results are read whole and the
 * datasource connection is released before the first row is sent, so a slow client holds none.
 */
import { authorizeStatement, callerExecutor, runAuthorized, type AuthorizedRun, type CallerExecutor } from '../statements/statement-pipeline.js';
import type { AuthorizedStatement } from '../authorization/sql-authorizer.js';
import { isDenial } from '../plugin-api/denial.js';
import { offAbort, onAbort } from '../sql/abort-listeners.js';
import type { Datasource, QueryResult, WireStatement } from '../plugin-api/sql-dialect.js';
import { isAllowedBuiltin } from '../authorization/function-policy.js';
import { deny } from '../plugin-api/denial.js';
import { callerCatalog, type CatalogCaller, type CatalogLimits, type CatalogResponder } from './catalog/index.js';
import type { DoorCaller } from './door-authentication.js';
import { textForm, typeOid } from './pg-types.js';
import { positionalText, type PositionalText } from './placeholders.js';
import { bufferedSource, type CursorSource } from './cursors.js';
import { sessionCommand, type CursorDeclaration, type RelationName, type SessionCommand } from './session-commands.js';
import { denialWireError, WireError } from './wire-errors.js';
import type { FieldDescription } from './wire-messages.js';

/** A statement prepared for running, by what answers it. */
export type StatementPlan =
  | { kind: 'empty' }
  | { kind: 'session'; command: DoorCommand }
  | RunPlan
  | { kind: 'declare'; cursor: CursorDeclaration; query: RunPlan }
  | { kind: 'prepare'; name: string; query: RunPlan }
  | { kind: 'copy'; query: RunPlan };

/** A session statement the door answers itself (DECLARE opens a query: a plan of its own). */
export type DoorCommand = Exclude<SessionCommand, { kind: 'declare' | 'prepare' | 'copy' }>;

/** A statement a datasource or the catalog answers. */
export type RunPlan =
  | { kind: 'catalog'; text: string; parameterCount: number }
  | {
    kind: 'vdb'; text: string; positional: PositionalText; statement: AuthorizedStatement; datasource: Datasource; readOnly: boolean;
    executors: PlanExecutors;
    /** Over several datasources: the federated plan, run with each run's parameters (core/federation/). */
    federated?: AuthorizedRun;
  };

/**
 * The executors (`callerExecutor`) a plan runs through, made at its first run and kept with it: the caller,
 * grants and limits of a connection do not change, and one made per run cost a tenth of a lookup's time.
 */
interface PlanExecutors {
  run?: CallerExecutor;
  /** Describe's run with NULL parameters, always read-only. */
  describe?: CallerExecutor;
}

/** Rows in PostgreSQL's text form, ready to be sent. */
export interface ResultSet {
  fields: FieldDescription[];
  rows: (string | null)[][];
  /** The CommandComplete tag, e.g. `SELECT 2`, `UPDATE 1`. */
  tag: string;
  /** Sent in binary in the simple protocol (a BINARY cursor's FETCH). */
  binary?: boolean;
}

export interface RunnerSettings {
  allowWrites: boolean;
  statementTimeoutMs: number;
  /** The largest result sent, as the JSON of its rows (`server.maxResultBytes`): rows are never buffered past it. */
  maxResultBytes: number;
}

/** How many plans a connection keeps, the oldest dropped first. */
const PLANS_KEPT = 100;

/** A relation of the database's own catalogs, which only the catalog answers may serve. */
const SYSTEM_SCHEMA = /^(pg_catalog|information_schema)\./i;

const ONLY_TRIVIA = /^(?:\s|;|--[^\n]*|\/\*[\s\S]*?\*\/)*$/;

export class StatementRunner {
  /** The search path the client set, which catalog statements run under (undefined: the mirror's). */
  searchPath: string | undefined;
  private catalogView: CatalogCaller | undefined;
  private readonly plans = new Map<string, StatementPlan>();

  constructor(
    private readonly caller: DoorCaller,
    private readonly settings: RunnerSettings,
    private readonly catalog: CatalogResponder | undefined,
  ) {}

  /**
   * Classifies and authorizes a statement's text; a refusal throws the WireError the client gets. Drivers
   * parse the same texts again and again (node-postgres sends Parse for every unnamed query): the plans of
   * the last texts are kept for the connection, whose caller and grants do not change. A kept plan is
   * answered without a promise.
   */
  plan(text: string): StatementPlan | Promise<StatementPlan> {
    return this.plans.get(text) ?? this.planNew(text).then((plan) => {
      // a session statement is cheap to classify and changes the session: not kept
      if (plan.kind !== 'session') {
        if (this.plans.size >= PLANS_KEPT) this.plans.delete(this.plans.keys().next().value as string);
        this.plans.set(text, plan);
      }
      return plan;
    });
  }

  private async planNew(text: string): Promise<StatementPlan> {
    if (ONLY_TRIVIA.test(text)) return { kind: 'empty' };
    const command = sessionCommand(text);
    if (command?.kind === 'declare') return { kind: 'declare', cursor: command.cursor, query: await this.cursorQuery(command.cursor.query) };
    if (command?.kind === 'copy') return { kind: 'copy', query: await this.cursorQuery(command.query) };
    if (command?.kind === 'prepare') return { kind: 'prepare', name: command.name, query: await this.preparedQuery(command.query) };
    if (command) return { kind: 'session', command };
    if (this.catalog?.handles(text)) return this.catalogPlan(this.catalog, text);
    const { handle, grants } = this.caller;
    const positional = positionalText(text, handle.dialect);
    const decision = await authorizeStatement({ handle, sql: positional.sql, bindings: [], grants, readOnly: !this.settings.allowWrites });
    if (isDenial(decision)) {
      if (decision.code === 'unknown_relation' && SYSTEM_SCHEMA.test(decision.resource ?? '')) {
        throw new WireError('0A000', `catalog introspection (${decision.resource}) is not answered by this SQL front door`, 'denial: catalog_not_answered');
      }
      throw denialWireError(decision);
    }
    return {
      kind: 'vdb', text, positional, statement: decision.facts, datasource: decision.datasource, readOnly: !this.settings.allowWrites || decision.facts.readOnly,
      executors: {}, ...(decision.federated && { federated: decision }),
    };
  }

  /**
   * A catalog statement, once its functions pass the same allow-list as on the data path (the dialect's,
   * the VDB's `allowFunctions`, the VDB functions the caller may execute) or the catalog functions clients
   * read the catalogs with.
   */
  private catalogPlan(catalog: CatalogResponder, text: string): StatementPlan {
    const { handle } = this.caller;
    const executable = new Set(this.catalogCaller().functions.map((fn) => fn.name));
    const refused = catalog.refusedFunction(text, (name) => executable.has(name) || isAllowedBuiltin(handle.dialect, name, handle.vdb.allowFunctions ?? []));
    if (refused !== undefined) {
      throw denialWireError(deny('function_not_allowed', `function ${refused} is not allowed (not on the allow-list; a VDB may add it with allowFunctions)`, refused));
    }
    return { kind: 'catalog', text, parameterCount: highestParameter(text) };
  }

  /** A cursor's query is authorized as any statement; PostgreSQL's grammar takes only a query there. */
  private async cursorQuery(text: string): Promise<RunPlan> {
    const plan = await this.plan(text);
    if ((plan.kind === 'vdb' && plan.statement.kind === 'select') || plan.kind === 'catalog') return plan;
    throw new WireError('42601', 'a cursor is declared for a query (SELECT or VALUES)');
  }

  /** PREPARE's statement is authorized now, as the extended protocol's Parse is. */
  private async preparedQuery(text: string): Promise<RunPlan> {
    const plan = await this.plan(text);
    if (plan.kind === 'vdb' || plan.kind === 'catalog') return plan;
    throw new WireError('0A000', 'PREPARE of a session statement is not supported by the SQL front door');
  }

  /**
   * Opens a cursor's query with the client's parameters: on the datasource where it offers cursors
   * (`Datasource.openCursor`: rows are read as they are fetched), else read whole, within the result budget,
   * as any statement's result.
   */
  async openCursor(plan: RunPlan, parameters: readonly unknown[], signal: AbortSignal): Promise<CursorSource> {
    const executor = plan.kind === 'vdb' ? this.executor(plan, 'run') : undefined;
    if (plan.kind === 'catalog' || executor?.openCursor === undefined) return bufferedSource(await this.run(plan, parameters, signal));
    const bindings = plan.positional.order.map((index) => parameters[index]);
    const cursor = await executor.openCursor(plan.positional.sql, bindings, signal);
    const { columns, withTimeZone } = cursor;
    return {
      fields: resultSet({ columns, rows: [], rowCount: 0, truncated: false, ...(withTimeZone && { withTimeZone }) }, '').fields,
      next: async (count, fetching) => {
        const result = await abortable(cursor.fetch(count, { maxBytes: this.settings.maxResultBytes, signal: fetching }), fetching);
        if (result.truncatedBy === 'maxBytes') throw this.overBudget();
        return resultSet(result, '').rows;
      },
      close: () => cursor.close(),
    };
  }

  /**
   * LOCK of relations the caller may see is accepted, and holds nothing: each statement runs on its own
   * datasource connection, so no lock could outlive it. Any other relation does not exist, as for every
   * statement of the caller.
   */
  lock(relations: readonly RelationName[]): void {
    const visible = this.catalogCaller().relations;
    for (const { schema, name } of relations) {
      if (!visible.some((relation) => relation.name === name && (schema === undefined || relation.schema === schema))) {
        throw new WireError('42P01', `relation "${schema === undefined ? name : `${schema}.${name}`}" does not exist`);
      }
    }
  }

  /** How many parameters a plan takes. */
  parameterCount(plan: StatementPlan): number {
    if (plan.kind === 'declare') return this.parameterCount(plan.query);
    if (plan.kind === 'prepare' || plan.kind === 'copy') return 0;
    if (plan.kind === 'vdb') return plan.positional.parameterCount;
    return plan.kind === 'catalog' ? plan.parameterCount : 0;
  }

  /**
   * Whether a plan's statements are forwarded to its datasource as the client sent them
   * (`Datasource.forwardWire`, a PostgreSQL datasource), rather than run and encoded here.
   */
  forwards(plan: StatementPlan): plan is StatementPlan & { kind: 'vdb' } {
    return plan.kind === 'vdb' && plan.federated === undefined && plan.datasource.forwardWire !== undefined;
  }

  /**
   * Forwards an authorized plan's statement through its executor (the caller's role, read-only unless
   * writes are allowed and the statement writes, the time limit); the backend's answer goes to `send`. A
   * Describe of the statement runs nothing and goes through the read-only executor. Rows past the result
   * budget cancel the statement: 54000.
   */
  async forward(plan: StatementPlan & { kind: 'vdb' }, statement: WireStatement, signal: AbortSignal, send: (message: Buffer) => void): Promise<void> {
    const executor = this.executor(plan, statement.describe === 'statement' ? 'describe' : 'run');
    const outcome = await executor.forwardWire!(statement, { signal, maxBytes: this.settings.maxResultBytes, send });
    if (outcome === 'cut') throw this.overBudget();
  }

  private overBudget(): WireError {
    return new WireError('54000', `the result is larger than ${this.settings.maxResultBytes} bytes (server.maxResultBytes)`);
  }

  /** Runs a catalog or VDB plan with the client's parameter values (index i is `$i+1`). */
  async run(plan: StatementPlan & { kind: 'catalog' | 'vdb' }, parameters: readonly unknown[], signal: AbortSignal): Promise<ResultSet> {
    if (plan.kind === 'catalog') return this.answerCatalog(plan.text, parameters, signal);
    const count = plan.positional.parameterCount;
    if (parameters.length < count) {
      throw new WireError('08P01', `bind message supplies ${parameters.length} parameters, but prepared statement requires ${count}`);
    }
    const result = await this.query(plan, 'run', plan.positional.order.map((index) => parameters[index]), signal, undefined);
    if (result.truncatedBy === 'maxBytes') throw this.overBudget();
    return resultSet(result, tag(plan.statement, result.rowCount));
  }

  /**
   * The columns a plan returns, before it is bound (Describe of a statement): the catalog mirror describes
   * a catalog statement without running it; a VDB query runs once with every parameter NULL, read-only,
   * keeping no row; a write returns none.
   */
  async describe(plan: StatementPlan & { kind: 'catalog' | 'vdb' }, signal: AbortSignal): Promise<FieldDescription[]> {
    if (plan.kind === 'catalog') return (await this.catalogResponder().describe(plan.text, this.catalogCaller(), this.catalogLimits(signal))).fields;
    if (plan.statement.kind !== 'select') return [];
    const result = await this.query(plan, 'describe', plan.positional.order.map(() => null), signal, 0);
    return resultSet(result, '').fields;
  }

  private query(
    plan: StatementPlan & { kind: 'vdb' }, use: keyof PlanExecutors, bindings: unknown[], signal: AbortSignal, maxRows: number | undefined,
  ): Promise<QueryResult> {
    const executor = this.executor(plan, use);
    const running = executor.query(plan.positional.sql, bindings, { signal, maxBytes: this.settings.maxResultBytes, ...(maxRows !== undefined && { maxRows }) });
    return abortable(running, signal);
  }

  private executor(plan: StatementPlan & { kind: 'vdb' }, use: keyof PlanExecutors): CallerExecutor {
    const { handle, grants } = this.caller;
    const run = {
      readOnly: use === 'describe' || plan.readOnly,
      timeoutMs: this.settings.statementTimeoutMs,
      ...(plan.statement.kind === 'select' && { maxRowBytes: this.settings.maxResultBytes }),
    };
    const { federated } = plan;
    if (federated !== undefined) {
      return plan.executors[use] ??= {
        query: (_sql, bindings, options) => runAuthorized({ ...federated, bindings }, { ...run, signal: options?.signal }, options),
        transaction: () => Promise.reject(new WireError('0A000', 'a statement over several datasources runs outside a transaction')),
      };
    }
    return plan.executors[use] ??= callerExecutor(plan.datasource, handle.vdb, grants, run);
  }

  private async answerCatalog(text: string, parameters: readonly unknown[], signal: AbortSignal): Promise<ResultSet> {
    // the mirror takes PostgreSQL's text form, as the client sent it
    const values = parameters.map((value) => (value === null || value === undefined ? null : textOf(value)));
    const answer = await this.catalogResponder().answer(text, values, this.catalogCaller(), this.catalogLimits(signal), this.searchPath);
    return { fields: answer.fields, rows: answer.rows, tag: answer.command };
  }

  /** The data path's bounds (budget, time limit, cancel), and who asks: one caller's statements wait for each other, not for others'. */
  private catalogLimits(signal: AbortSignal): CatalogLimits {
    const { principal } = this.caller;
    return { signal, maxBytes: this.settings.maxResultBytes, timeoutMs: this.settings.statementTimeoutMs, owner: `${principal.scheme}\u0000${principal.subject}` };
  }

  /** The database role the caller's statements run as (what `session_user` shows), named as the catalog names it. */
  role(): string {
    return this.catalogCaller().role;
  }

  private catalogCaller(): CatalogCaller {
    const { handle, grants } = this.caller;
    return this.catalogView ??= callerCatalog(handle.vdb, grants, handle.dialect.maxRoleNameBytes);
  }

  /** Only a plan of kind `catalog` asks, and only a runner with a responder makes one. */
  private catalogResponder(): CatalogResponder {
    if (this.catalog === undefined) throw new WireError('0A000', 'catalog introspection is not answered by this SQL front door');
    return this.catalog;
  }
}

/**
 * The client gets its cancellation at once; the datasource cancels the statement on the signal. One promise
 * per run (a `finally` was one more).
 */
function abortable<T>(running: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new WireError('57014', 'canceling statement due to user request'));
  return new Promise<T>((resolve, reject) => {
    const canceled = () => reject(new WireError('57014', 'canceling statement due to user request'));
    onAbort(signal, canceled);
    running.then((value) => {
      offAbort(signal, canceled);
      resolve(value);
    }, (error: unknown) => {
      offAbort(signal, canceled);
      reject(error);
    });
  });
}

function resultSet(result: QueryResult, commandTag: string): ResultSet {
  const { columns, withTimeZone } = result;
  return {
    fields: columns.map((column) => ({ name: column.name, typeOid: typeOid(column.logicalType, withTimeZone?.includes(column.name)) })),
    rows: result.rows.map((row) => columns.map((column) => textForm(row[column.name] ?? null, column.logicalType))),
    tag: commandTag,
  };
}

function tag(statement: AuthorizedStatement, rowCount: number): string {
  switch (statement.kind) {
    case 'insert': return `INSERT 0 ${rowCount}`;
    case 'update': return `UPDATE ${rowCount}`;
    case 'delete': return `DELETE ${rowCount}`;
    default: return `SELECT ${rowCount}`;
  }
}

function highestParameter(text: string): number {
  return Math.max(0, ...[...text.matchAll(/\$(\d+)/g)].map((match) => Number(match[1])));
}

/** A bound value (text, or as `binaryParameter` decodes it: numbers, booleans, bytea) in PostgreSQL's text form. */
function textOf(value: unknown): string {
  return Buffer.isBuffer(value) ? `\\x${value.toString('hex')}` : String(value);
}
