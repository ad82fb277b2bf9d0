/**
 * One client connection of the SQL front door, as a dispatcher: the connection frames what the client sends
 * (wire-connection.ts), the startup and the password are answered as wire-startup.ts says, then each message
 * goes to its handler, one at a time, in order: a simple query here, the extended protocol's messages to
 * wire-extended.ts, session statements to the session's state (wire-session-state.ts), and every other
 * statement to the statement runner or, forwarded, to its datasource. Answers are collected and written at
 * Sync, Flush and the end of a simple query.
 */
import { randomInt } from 'node:crypto';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { State } from 'pg-gateway';
import type { AuthScheme } from '../plugin-api/auth-scheme.js';
import type { WireStatement } from '../plugin-api/sql-dialect.js';
import type { VdbHandles } from '../vdb/vdb-handles.js';
import type { CatalogResponder } from './catalog/index.js';
import { StatementRunner, type ResultSet, type RunnerSettings, type StatementPlan } from './statement-runner.js';
import { WireConnection, type MessageReader, type Step } from './wire-connection.js';
import { statementWireError } from './wire-errors.js';
import { ExtendedProtocol, type ExtendedHost } from './wire-extended.js';
import { BackendMessages, decoded, FRONTEND, messageType, readQuery, type FieldDescription } from './wire-messages.js';
import { sendRows } from './wire-rows.js';
import { SessionState } from './wire-session-state.js';
import { answerStartup, authenticate, AUTHENTICATION_TIMEOUT_MS, welcome } from './wire-startup.js';

/** What every session of one door shares. */
export interface SessionDeps {
  scheme: AuthScheme;
  handles: VdbHandles;
  catalog: CatalogResponder | undefined;
  settings: RunnerSettings;
  idleTimeoutMs: number;
  tls: { key: Buffer; cert: Buffer } | undefined;
  logger: Logger;
  /** Called with a CancelRequest's key: the session it names cancels its running statement. */
  cancel(processId: number, secret: number): void;
}

/** What is this connection's own. */
export interface SessionOptions {
  /** With `secret`, the key its client cancels with (BackendKeyData). */
  processId: number;
  /** Whether this connection is one too many (53300 after its startup message). */
  overLimit: boolean;
  onClose(): void;
}

/** COPY … TO STDOUT reads and writes this many rows at a time. */
const COPY_BATCH_ROWS = 200;

export class WireSession implements ExtendedHost {
  private readonly connection: WireConnection;
  private readonly messages: BackendMessages;
  private readonly state: SessionState;
  private readonly extended: ExtendedProtocol;
  readonly secret = randomInt(1, 0x7fffffff);
  private phase: 'startup' | 'password' | 'ready' = 'startup';
  private authenticated: StatementRunner | undefined;
  /**
   * The signal of the running statement. One controller serves the statements of the connection until a
   * cancel aborts it: a new one per statement cost more than the rest of the door's work on a lookup.
   */
  private controller = new AbortController();
  private running = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** When the last message was handled (`Date.now()`): the idle timer is armed once and looks at this when it fires. */
  private lastActivity = Date.now();
  /** When the connection was accepted: the authentication timeout counts from here, whatever arrives since. */
  private readonly acceptedAt = Date.now();

  constructor(socket: Socket, private readonly context: SessionDeps, private readonly options: SessionOptions) {
    this.state = new SessionState(context.settings.maxResultBytes, () => this.authenticated?.role());
    this.connection = new WireConnection(socket, context.tls, {
      startup: (state) => this.onStartup(state),
      cancelRequest: (processId, secret) => context.cancel(processId, secret),
      message: (reader) => this.handleMessage(reader),
      closed: () => {
        clearTimeout(this.idleTimer);
        if (this.running) this.controller.abort();
        // a cursor on the datasource holds a connection
        void this.state.cursors.close(undefined);
        options.onClose();
      },
    });
    this.messages = this.connection.messages;
    this.extended = new ExtendedProtocol(this.connection, this.state, this);
    this.armIdleTimer();
  }

  /** The caller's statement runner, once authenticated: no message that needs it is handled before. */
  get runner(): StatementRunner {
    return this.authenticated as StatementRunner;
  }

  /** Cancels the running statement when `secret` is this session's (a CancelRequest). */
  cancel(secret: number): void {
    if (secret === this.secret && this.running) this.controller.abort();
  }

  /** Ends the connection as a PostgreSQL server does at shutdown (57P01). */
  terminate(): void {
    if (this.connection.closed) return;
    this.connection.send(this.messages.error('FATAL', '57P01', 'terminating connection due to administrator command'));
    this.connection.end();
  }

  private onStartup(state: State): void {
    if (answerStartup(this.connection, state, this.options.overLimit, this.state.parameters)) this.phase = 'password';
  }

  /** Never rejects. */
  private handleMessage(reader: MessageReader): Step {
    let step: Step;
    try {
      if (this.phase === 'password') step = this.authenticate(reader);
      else if (this.phase === 'ready') step = this.handle(messageType(reader), reader);
    } catch (error) {
      return this.unexpected(error);
    }
    if (!step) {
      this.lastActivity = Date.now();
      return undefined;
    }
    return step.then(() => { this.lastActivity = Date.now(); }, (error: unknown) => this.unexpected(error));
  }

  /** What no handler expected: the client gets an error, the connection stays usable. */
  private async unexpected(error: unknown): Promise<void> {
    this.context.logger.error({ err: error }, 'SQL front door: a message failed');
    this.connection.send(this.messages.error('ERROR', 'XX000', 'internal error'));
    await this.connection.flush();
    this.lastActivity = Date.now();
  }

  private async authenticate(reader: MessageReader): Promise<void> {
    const { scheme, handles, settings, catalog } = this.context;
    const caller = await authenticate(this.connection, scheme, handles, reader, this.state.parameters.get('database'));
    if (caller === undefined) return;
    this.authenticated = new StatementRunner(caller, settings, catalog);
    catalog?.prepare();
    this.phase = 'ready';
    this.connection.authenticatedCaller();
    welcome(this.connection, (name) => this.state.setting(name), this.options.processId, this.secret);
    await this.connection.flush();
  }

  private handle(type: number, reader: MessageReader): Step {
    switch (type) {
      case FRONTEND.query: return this.simpleQuery(() => readQuery(reader));
      case FRONTEND.sync: return this.extended.sync();
      case FRONTEND.flush: return this.connection.flush();
      case FRONTEND.terminate:
        this.connection.end();
        return undefined;
      case FRONTEND.parse:
      case FRONTEND.bind:
      case FRONTEND.describe:
      case FRONTEND.execute:
      case FRONTEND.close:
        return this.extended.handle(type, reader);
      default:
        // COPY and function calls are not served
        this.connection.send(this.messages.error('ERROR', '0A000', `message type "${String.fromCharCode(type)}" is not supported by the SQL front door`));
        this.connection.send(this.messages.readyForQuery(this.state.transaction));
        return this.connection.flush();
    }
  }

  private async simpleQuery(read: () => string): Promise<void> {
    this.extended.simpleQuery();
    try {
      const plan = await this.runner.plan(decoded(read));
      const result = this.runner.forwards(plan)
        ? await this.forward(plan, { text: plan.text, parameterTypes: [], describe: 'portal', execute: true })
        : await this.result(plan, []);
      if (result === 'forwarded') {
        // the backend's answer is pending already
      } else if (result === 'empty') {
        this.connection.send(this.messages.bare(BackendMessages.CODE.emptyQuery));
      } else {
        const formats = result.binary === true ? [1] : [];
        if (result.fields.length > 0) this.connection.send(this.messages.rowDescription(result.fields, formats));
        sendRows(this.messages, (message) => this.connection.send(message), result, formats, 0, result.rows.length);
        this.connection.send(this.messages.commandComplete(result.tag));
      }
    } catch (error) {
      this.statementFailed(error);
    }
    this.connection.send(this.messages.readyForQuery(this.state.transaction));
    await this.connection.flush();
  }

  /**
   * Sends a forwarded plan's statement to its datasource through the runner, after the same checks as
   * `result`; the backend's answer is collected with the rest, or dropped when the statement fails.
   */
  async forward(plan: StatementPlan & { kind: 'vdb' }, statement: WireStatement): Promise<'forwarded'> {
    this.state.admit(plan);
    const mark = this.connection.mark();
    try {
      await this.cancellable((signal) => this.runner.forward(plan, statement, signal, (message) => this.connection.send(message)));
    } catch (error) {
      this.connection.dropAfter(mark);
      throw error;
    }
    return 'forwarded';
  }

  /** Runs a plan: session statements by the session's state, the others through the runner, cancellable by the client. */
  async result(plan: StatementPlan, parameters: readonly unknown[]): Promise<ResultSet | 'empty'> {
    if (plan.kind === 'empty') return 'empty';
    this.state.admit(plan);
    if (plan.kind === 'session') return this.state.run(plan.command, this);
    if (plan.kind === 'declare') return this.declare(plan, parameters);
    if (plan.kind === 'copy') return this.copyOut(plan);
    if (plan.kind === 'prepare') return this.state.prepare(plan, this.runner);
    return this.cancellable((signal) => this.runner.run(plan, parameters, signal));
  }

  /**
   * COPY … TO STDOUT: the query's rows as CopyData in the text format, read a batch at a time as a cursor
   * reads them (on PostgreSQL from the server, elsewhere from the result read within the budget), each batch
   * written before the next is read.
   */
  private async copyOut(plan: StatementPlan & { kind: 'copy' }): Promise<ResultSet> {
    const source = await this.cancellable((signal) => this.runner.openCursor(plan.query, [], signal));
    try {
      this.connection.send(this.messages.copyOutResponse(source.fields.length));
      let count = 0;
      for (;;) {
        const rows = await this.cancellable((signal) => source.next(COPY_BATCH_ROWS, signal));
        for (const row of rows) this.connection.send(this.messages.copyData(Buffer.from(`${row.map(copyText).join('\t')}\n`)));
        count += rows.length;
        await this.connection.flush();
        if (rows.length < COPY_BATCH_ROWS) break;
      }
      this.connection.send(this.messages.copyDone());
      return { fields: [], rows: [], tag: `COPY ${count}` };
    } finally {
      await source.close();
    }
  }

  /** DECLARE: the cursor's query, authorized at Parse, is opened with its parameters. */
  private async declare(plan: StatementPlan & { kind: 'declare' }, parameters: readonly unknown[]): Promise<ResultSet> {
    const inTransaction = this.state.transaction === 'T';
    this.state.cursors.admit(plan.cursor, inTransaction);
    const source = await this.cancellable((signal) => this.runner.openCursor(plan.query, parameters, signal));
    this.state.cursors.add(plan.cursor, source, inTransaction);
    return { fields: [], rows: [], tag: 'DECLARE CURSOR' };
  }

  describedFields(plan: StatementPlan): Promise<FieldDescription[]> {
    if (plan.kind === 'empty') return Promise.resolve([]);
    if (plan.kind === 'declare' || plan.kind === 'prepare' || plan.kind === 'copy') return Promise.resolve([]);
    if (plan.kind === 'session') return this.state.fields(plan.command, (prepared) => this.describedFields(prepared));
    return this.cancellable((signal) => this.runner.describe(plan, signal));
  }

  async cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.controller.signal.aborted) this.controller = new AbortController();
    const { signal } = this.controller;
    this.running = true;
    try {
      return await work(signal);
    } catch (error) {
      throw statementWireError(error, signal.aborted);
    } finally {
      this.running = false;
    }
  }

  statementFailed(error: unknown): void {
    const failure = statementWireError(error, false);
    if (failure.sqlState === 'XX000') this.context.logger.warn({ err: error }, 'SQL front door: a statement failed');
    this.state.failed();
    this.connection.send(this.messages.error('ERROR', failure.sqlState, failure.message, failure.detail));
  }

  /**
   * A connection that says nothing for `sql.idleTimeoutMs` is closed, as PostgreSQL's idle_session_timeout
   * does; one that has not authenticated within the authentication timeout too, so that connections that
   * never log in do not hold the slots of `sql.maxConnections`.
   */
  private armIdleTimer(): void {
    if (this.connection.closed) return;
    const authenticated = this.phase === 'ready';
    const limit = authenticated ? this.context.idleTimeoutMs : Math.min(this.context.idleTimeoutMs, AUTHENTICATION_TIMEOUT_MS);
    // a message since the timer was set moves the deadline: the timer is set again for what is left; before
    // authentication nothing moves it, however slowly the client sends
    const left = (authenticated ? this.lastActivity : this.acceptedAt) + limit - Date.now();
    this.idleTimer = setTimeout(() => {
      if (this.connection.closed) return;
      if (this.running) {
        this.lastActivity = Date.now();
        return this.armIdleTimer();
      }
      // a message came since, or the caller logged in and the longer limit applies
      if ((authenticated && Date.now() - this.lastActivity < limit) || (this.phase === 'ready' && !authenticated)) return this.armIdleTimer();
      this.connection.send(this.messages.error('FATAL', '57P05', authenticated
        ? 'terminating connection due to idle-session timeout'
        : 'terminating connection: no startup and password within the authentication timeout'));
      this.connection.end();
    }, Math.max(left, 0));
    this.idleTimer.unref();
  }
}

/** A value in COPY's text format: NULL is `\N`; backslash, tab, newline and carriage return are escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r]/g, (character) => COPY_ESCAPES[character] as string);
}

const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
