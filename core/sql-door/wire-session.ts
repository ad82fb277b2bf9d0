/**
 * One client connection of the SQL front door: pg-gateway frames the messages and answers SSLRequest
 * (TLS); this session authenticates the caller, then answers the simple and extended query protocols.
 * Messages are handled one at a time, in order (pg-gateway pauses the socket while one is handled); the
 * answers are collected and written at Sync, Flush and the end of a simple query.
 */
import { randomInt } from 'node:crypto';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { PostgresConnection, type State } from 'pg-gateway';
import type { AuthScheme } from '../plugin-api/auth-scheme.js';
import type { WireStatement } from '../plugin-api/sql-dialect.js';
import type { VdbHandles } from '../vdb/vdb-handles.js';
import type { CatalogResponder } from './catalog/index.js';
import { SessionCursors } from './cursors.js';
import { authenticateCaller } from './door-authentication.js';
import { binaryForm, binaryParameter, PG_TYPE } from './pg-types.js';
import { REPORTED_SETTINGS, SERVER_SETTINGS, SETTING_DESCRIPTIONS, settingSpelling } from './session-commands.js';
import { StatementRunner, type DoorCommand, type ResultSet, type RunnerSettings, type StatementPlan } from './statement-runner.js';
import { statementWireError, WireError } from './wire-errors.js';
import { MAX_PASSWORD_BYTES, MAX_STARTUP_BYTES, MessageFramer, StartupGuard } from './wire-framing.js';
import {
  BackendMessages, FRONTEND, messageType, readBind, readCancelRequest, readExecute, readParse, readQuery, readTarget,
  type FieldDescription,
} from './wire-messages.js';

/** What every session of one door shares. */
export interface SessionContext {
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

interface PreparedStatement {
  plan: StatementPlan;
  /** The type of each parameter: as the client declared it at Parse, else text. */
  parameterTypes: number[];
  /** The types as the client declared them (0: unspecified), for a forwarded statement's Parse. */
  declaredTypes: readonly number[];
  /** The columns, once described. */
  fields?: FieldDescription[];
}

type BoundValues = ReturnType<typeof readBind>['parameters'];

interface Portal {
  statement: PreparedStatement;
  /** The values as the client sent them. */
  bound: BoundValues;
  /** The values decoded, for a plan the door runs itself; a forwarded plan's are decoded only if it must. */
  parameters?: unknown[];
  resultFormats: number[];
  result?: ResultSet | 'empty';
  /** Rows already sent (an Execute with a row limit leaves the portal suspended). */
  sent: number;
  /** A forwarded portal whose Describe is answered with its Execute, which followed it at once. */
  describeWithRows?: boolean;
}

type TransactionStatus = 'I' | 'T' | 'E';

/**
 * A handler's work: done (undefined) when it needed no I/O, else its promise. Most messages of a query
 * (Parse of a known text, Bind, Execute of a described portal, Sync) need none, and a promise per message and
 * handler was a large share of the door's CPU per lookup.
 */
type Step = Promise<void> | undefined;

/** A longer message is refused: statements are bounded by `sql.maxStatementBytes`, parameters by this. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long a closed connection's client has to read the last answer and close its side. */
const CLOSE_GRACE_MS = 5_000;
/** How long a connection may take, from its first byte, to send its startup message and password. */
const AUTHENTICATION_TIMEOUT_MS = 60_000;
/** COPY … TO STDOUT reads and writes this many rows at a time. */
const COPY_BATCH_ROWS = 200;
/** Past this many messages waiting, the socket is paused until they are handled. */
const MAX_QUEUED_MESSAGES = 1_000;

export class WireSession {
  private readonly connection: PostgresConnection;
  private readonly messages: BackendMessages;
  readonly secret = randomInt(1, 0x7fffffff);
  private phase: 'startup' | 'password' | 'ready' | 'closed' = 'startup';
  private runner: StatementRunner | undefined;
  private readonly cursors: SessionCursors;
  private readonly statements = new Map<string, PreparedStatement>();
  private readonly portals = new Map<string, Portal>();
  private readonly parameters = new Map<string, string>();
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipToSync = false;
  private transaction: TransactionStatus = 'I';
  /**
   * The signal of the running statement. One controller serves the statements of the connection until a
   * cancel aborts it: a new one per statement cost more than the rest of the door's work on a lookup.
   */
  private controller = new AbortController();
  private running = false;
  private idleTimer: NodeJS.Timeout | undefined;
  /** When the last message was handled (`Date.now()`): the idle timer is armed once and looks at this when it fires. */
  private lastActivity = Date.now();
  private pending: Buffer[] = [];
  /** When the connection was accepted: the authentication timeout counts from here, whatever arrives since. */
  private readonly acceptedAt = Date.now();
  /** Bytes received after the last whole message. */
  private readonly framer = new MessageFramer();
  /** Messages received and not yet handled. */
  private readonly inbox: Buffer[] = [];
  private draining = false;

  constructor(private readonly socket: Socket, private readonly context: SessionContext, private readonly options: SessionOptions) {
    this.cursors = new SessionCursors(context.settings.maxResultBytes);
    socket.on('error', () => socket.destroy());
    // answers are written whole at Sync: each is one segment, sent at once, as PostgreSQL does
    socket.setNoDelay(true);
    socket.once('close', () => {
      this.phase = 'closed';
      clearTimeout(this.idleTimer);
      if (this.running) this.controller.abort();
      // a cursor on the datasource holds a connection
      void this.cursors.close(undefined);
      options.onClose();
    });
    this.connection = new PostgresConnection(socket, {
      ...(context.tls && { tls: context.tls }),
      onMessage: (data, state) => this.onMessage(data, state),
      onStartup: (state) => this.onStartup(state),
    });
    this.guardTlsSocket();
    this.guardStartup(socket);
    this.messages = new BackendMessages(this.connection.writer);
    this.armIdleTimer();
  }

  /** Cancels the running statement when `secret` is this session's (a CancelRequest). */
  cancel(secret: number): void {
    if (secret === this.secret && this.running) this.controller.abort();
  }

  /** Ends the connection as a PostgreSQL server does at shutdown (57P01). */
  terminate(): void {
    if (this.phase === 'closed') return;
    this.send(this.messages.error('FATAL', '57P01', 'terminating connection due to administrator command'));
    this.end();
  }

  /**
   * pg-gateway upgrades to TLS itself but leaves its TLSSocket without an `error` listener, so a failed
   * handshake would be an uncaught error: the listener is added as the socket is assigned.
   */
  private guardTlsSocket(): void {
    let secure: TLSSocket | undefined;
    Object.defineProperty(this.connection, 'secureSocket', {
      get: () => secure,
      set: (socket: TLSSocket) => {
        secure = socket;
        socket.on('error', () => this.socket.destroy());
      },
    });
  }

  /**
   * pg-gateway frames what comes before the startup message and buffers a message whole, whatever length it
   * announces: its read handler, which it also listens with on the TLS socket, is wrapped so that each read
   * is checked first and one announcing a length out of bounds never reaches it.
   */
  private guardStartup(socket: Socket): void {
    const gateway = this.connection as unknown as { boundDataHandler: (chunk: Buffer) => void };
    const handle = gateway.boundDataHandler;
    const guard = new StartupGuard();
    socket.off('data', handle);
    gateway.boundDataHandler = (chunk: Buffer) => {
      const invalid = guard.inspect(chunk);
      if (invalid === undefined) return handle(chunk);
      this.drop(new WireError('08P01', `invalid length of startup packet (${invalid} bytes; at most ${MAX_STARTUP_BYTES})`, undefined, 'FATAL'));
    };
    socket.on('data', gateway.boundDataHandler);
  }

  private onStartup(state: State): boolean {
    if (this.options.overLimit) {
      this.send(this.messages.error('FATAL', '53300', 'sorry, too many clients already'));
      this.end();
      return true;
    }
    for (const [name, value] of Object.entries(state.clientInfo?.parameters ?? {})) this.parameters.set(name.toLowerCase(), value);
    this.phase = 'password';
    this.connection.socket.write(this.messages.authenticationCleartextPassword());
    // the client answers only once it has read this: nothing is left in pg-gateway's buffer
    this.connection.detach().on('data', (chunk: Buffer) => this.receive(chunk));
    return true;
  }

  /** Before the startup message: a CancelRequest is this door's, SSLRequest and startup pg-gateway's. */
  private onMessage(data: Uint8Array, state: State): boolean {
    if (state.hasStarted) return true;
    const cancel = readCancelRequest(data);
    if (!cancel) return false;
    this.context.cancel(cancel.processId, cancel.secret);
    this.end();
    return true;
  }

  /**
   * The messages after the startup message are framed here: pg-gateway 0.2.4 cuts every message after the
   * first of a read chunk at the wrong end (`subarray(start, length)`), which loses the pipelined messages
   * of the extended protocol. Each message is queued and handled in order, one at a time; a client that
   * sends faster than its statements run is paused.
   */
  private receive(chunk: Buffer): void {
    if (this.phase === 'closed') return;
    // before authentication only a password message is expected, and it is short
    const authenticated = this.phase === 'ready';
    const invalid = this.framer.push(chunk, authenticated ? MAX_MESSAGE_BYTES : MAX_PASSWORD_BYTES, this.inbox);
    if (invalid !== undefined) {
      return this.drop(new WireError('08P01', `invalid message length ${invalid}${authenticated ? '' : ` (a password message holds at most ${MAX_PASSWORD_BYTES} bytes)`}`, undefined, 'FATAL'));
    }
    // an unauthenticated client is read no further while its password is checked
    if (this.inbox.length > (authenticated ? MAX_QUEUED_MESSAGES : 0)) this.connection.socket.pause();
    if (!this.draining) void this.drainInbox();
  }

  /** Handles the queued messages in order; one that waits resumes the queue when it is done. */
  private drainInbox(): void {
    this.draining = true;
    while (this.inbox.length > 0 && this.phase !== 'closed') {
      const waiting = this.handleMessage(this.inbox.shift() as Buffer);
      if (waiting) {
        void waiting.then(() => this.drainInbox());
        return;
      }
    }
    this.draining = false;
    if (this.phase !== 'closed') this.connection.socket.resume();
  }

  /** Never rejects. */
  private handleMessage(message: Buffer): Step {
    const reader = this.connection.reader;
    // every handler reads its message whole before its first await
    reader.setBuffer(0, message);
    let step: Step;
    try {
      const type = messageType(reader);
      if (this.phase === 'password') step = this.authenticate(type, reader.cstring());
      else if (this.phase === 'ready') step = this.handle(type, reader);
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
    this.send(this.messages.error('ERROR', 'XX000', 'internal error'));
    await this.flush();
    this.lastActivity = Date.now();
  }

  private async authenticate(type: number, password: string): Promise<void> {
    if (type !== FRONTEND.password) return this.fail(new WireError('08P01', 'expected a password message', undefined, 'FATAL'));
    let caller;
    try {
      caller = await authenticateCaller(this.context.scheme, this.context.handles, password, this.parameters.get('database'));
    } catch (error) {
      if (error instanceof WireError) return this.fail(error);
      throw error;
    }
    this.runner = new StatementRunner(caller, this.context.settings, this.context.catalog);
    this.context.catalog?.prepare();
    this.phase = 'ready';
    this.send(this.messages.authenticationOk());
    for (const name of REPORTED_SETTINGS) this.send(this.messages.parameterStatus(name, this.setting(name) ?? ''));
    this.send(this.messages.backendKeyData(this.options.processId, this.secret));
    this.send(this.messages.readyForQuery('I'));
    await this.flush();
  }

  private handle(type: number, reader: PostgresConnection['reader']): Step {
    switch (type) {
      case FRONTEND.query: return this.simpleQuery(() => readQuery(reader));
      case FRONTEND.sync:
        this.skipToSync = false;
        this.send(this.messages.readyForQuery(this.transaction));
        return this.flush();
      case FRONTEND.flush: return this.flush();
      case FRONTEND.terminate:
        this.end();
        return undefined;
      case FRONTEND.parse: return this.extended(() => this.parse(decoded(() => readParse(reader))));
      case FRONTEND.bind: return this.extended(() => this.bind(decoded(() => readBind(reader))));
      case FRONTEND.describe: return this.extended(() => this.describe(decoded(() => readTarget(reader))));
      case FRONTEND.execute: return this.extended(() => this.execute(decoded(() => readExecute(reader))));
      case FRONTEND.close: return this.extended(() => this.close(decoded(() => readTarget(reader))));
      default:
        // COPY and function calls are not served
        this.send(this.messages.error('ERROR', '0A000', `message type "${String.fromCharCode(type)}" is not supported by the SQL front door`));
        this.send(this.messages.readyForQuery(this.transaction));
        return this.flush();
    }
  }

  /** An extended-protocol step: an error is sent and what follows is skipped until Sync. */
  private extended(run: () => Step): Step {
    if (this.skipToSync) return undefined;
    let step: Step;
    try {
      step = run();
    } catch (error) {
      this.failStep(error);
      return undefined;
    }
    return step?.catch((error: unknown) => this.failStep(error));
  }

  private failStep(error: unknown): void {
    this.sendStatementError(error);
    this.skipToSync = true;
  }

  private async simpleQuery(read: () => string): Promise<void> {
    this.skipToSync = false;
    try {
      const plan = await this.runner!.plan(decoded(read));
      const result = this.runner!.forwards(plan)
        ? await this.forward(plan, { text: plan.text, parameterTypes: [], describe: 'portal', execute: true })
        : await this.result(plan, []);
      if (result === 'forwarded') {
        // the backend's answer is pending already
      } else if (result === 'empty') {
        this.send(this.messages.bare(BackendMessages.CODE.emptyQuery));
      } else {
        const formats = result.binary === true ? [1] : [];
        if (result.fields.length > 0) this.send(this.messages.rowDescription(result.fields, formats));
        this.sendRows(result, formats, 0, result.rows.length);
        this.send(this.messages.commandComplete(result.tag));
      }
    } catch (error) {
      this.sendStatementError(error);
    }
    this.send(this.messages.readyForQuery(this.transaction));
    await this.flush();
  }

  private parse(message: ReturnType<typeof readParse>): Step {
    const plan = this.runner!.plan(message.text);
    return plan instanceof Promise ? plan.then((planned) => this.prepare(message, planned)) : this.prepare(message, plan);
  }

  private prepare(message: ReturnType<typeof readParse>, plan: StatementPlan): undefined {
    const count = Math.max(this.runner!.parameterCount(plan), message.parameterTypes.length);
    const parameterTypes = Array.from({ length: count }, (_, index) => message.parameterTypes[index] || PG_TYPE.text);
    this.statements.set(message.statement, { plan, parameterTypes, declaredTypes: message.parameterTypes });
    this.send(this.messages.bare(BackendMessages.CODE.parseComplete));
    return undefined;
  }

  private bind(message: ReturnType<typeof readBind>): undefined {
    const statement = this.statements.get(message.statement);
    if (!statement) throw new WireError('26000', `prepared statement "${message.statement}" does not exist`);
    const portal: Portal = { statement, bound: message.parameters, resultFormats: message.resultFormats, sent: 0 };
    // a forwarded statement's values go to the database as they are: it checks their form
    if (!this.runner!.forwards(statement.plan)) portal.parameters = decodedParameters(statement, message.parameters);
    this.portals.set(message.portal, portal);
    this.send(this.messages.bare(BackendMessages.CODE.bindComplete));
    return undefined;
  }

  /**
   * Sends a forwarded plan's statement to its datasource through the runner, after the same checks as
   * `result`; the backend's answer is collected with the rest, or dropped when the statement fails.
   */
  private async forward(plan: StatementPlan & { kind: 'vdb' }, statement: WireStatement): Promise<'forwarded'> {
    this.admit(plan);
    const mark = this.pending.length;
    try {
      await this.cancellable((signal) => this.runner!.forward(plan, statement, signal, (message) => this.pending.push(message)));
    } catch (error) {
      this.pending.length = mark;
      throw error;
    }
    return 'forwarded';
  }

  private forwardPortal(portal: Portal, plan: StatementPlan & { kind: 'vdb' }, describe: 'portal' | 'rows', execute: boolean): Promise<'forwarded'> {
    const { statement, bound, resultFormats } = portal;
    return this.forward(plan, { text: plan.text, parameterTypes: statement.declaredTypes, describe, execute, parameters: bound, resultFormats });
  }

  /**
   * Whether the next message waiting is an Execute of portal `name` for all its rows: drivers send Describe
   * and Execute together (node-postgres, JDBC), and the two are then answered by one forwarded statement.
   */
  private executeFollows(name: string): boolean {
    const next = this.inbox[0];
    if (next === undefined || next[0] !== FRONTEND.execute) return false;
    const end = next.indexOf(0, 5);
    return end > 0 && next.toString('utf8', 5, end) === name && next.length >= end + 5 && next.readInt32BE(end + 1) === 0;
  }

  private async describe(target: ReturnType<typeof readTarget>): Promise<void> {
    if (target.target === 'S') {
      const statement = this.statements.get(target.name);
      if (!statement) throw new WireError('26000', `prepared statement "${target.name}" does not exist`);
      const { plan } = statement;
      if (this.runner!.forwards(plan)) {
        await this.forward(plan, { text: plan.text, parameterTypes: statement.declaredTypes, describe: 'statement' });
        return;
      }
      this.send(this.messages.parameterDescription(statement.parameterTypes));
      statement.fields ??= await this.describedFields(statement.plan);
      this.sendRowDescription(statement.fields, []);
      return;
    }
    // a cursor is a portal too (psycopg 3 describes its named cursor's)
    const cursorFields = this.portals.has(target.name) ? undefined : this.cursors.fields(target.name);
    if (cursorFields) return this.sendRowDescription(cursorFields, []);
    const portal = this.portal(target.name);
    const { plan } = portal.statement;
    if (this.runner!.forwards(plan) && !portal.result) {
      if (this.executeFollows(target.name)) portal.describeWithRows = true;
      else await this.forwardPortal(portal, plan, 'portal', false);
      return;
    }
    portal.parameters ??= decodedParameters(portal.statement, portal.bound);
    portal.result ??= await this.result(plan, portal.parameters);
    this.sendRowDescription(portal.result === 'empty' ? [] : portal.result.fields, portal.resultFormats);
  }

  /** Sends a portal's rows; one described already (node-postgres describes every portal) needs no I/O. */
  private execute(message: ReturnType<typeof readExecute>): Step {
    const portal = this.portal(message.portal);
    if (portal.result) return this.sendPortal(portal, portal.result, message.maxRows);
    const { plan } = portal.statement;
    if (this.runner!.forwards(plan) && message.maxRows === 0) {
      return this.forwardPortal(portal, plan, portal.describeWithRows === true ? 'portal' : 'rows', true).then(() => undefined);
    }
    // a row limit leaves the portal suspended between Executes: the door runs it and keeps its rows
    portal.parameters ??= decodedParameters(portal.statement, portal.bound);
    return this.result(plan, portal.parameters).then((result) => {
      portal.result ??= result;
      return this.sendPortal(portal, portal.result, message.maxRows);
    });
  }

  private sendPortal(portal: Portal, result: ResultSet | 'empty', maxRows: number): undefined {
    if (result === 'empty') return this.send(this.messages.bare(BackendMessages.CODE.emptyQuery));
    const end = maxRows > 0 ? Math.min(result.rows.length, portal.sent + maxRows) : result.rows.length;
    this.sendRows(result, portal.resultFormats, portal.sent, end);
    portal.sent = end;
    if (end < result.rows.length) return this.send(this.messages.bare(BackendMessages.CODE.portalSuspended));
    this.send(this.messages.commandComplete(result.tag));
  }

  private close(target: ReturnType<typeof readTarget>): undefined {
    if (target.target === 'S') this.statements.delete(target.name);
    else this.portals.delete(target.name);
    this.send(this.messages.bare(BackendMessages.CODE.closeComplete));
  }

  private portal(name: string): Portal {
    const portal = this.portals.get(name);
    if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
    return portal;
  }

  /** Runs a plan: session statements here, the others through the runner, cancellable by the client. */
  private async result(plan: StatementPlan, parameters: readonly unknown[]): Promise<ResultSet | 'empty'> {
    if (plan.kind === 'empty') return 'empty';
    this.admit(plan);
    if (plan.kind === 'session') return this.sessionResult(plan.command);
    if (plan.kind === 'declare') return this.declare(plan, parameters);
    if (plan.kind === 'copy') return this.copyOut(plan);
    if (plan.kind === 'prepare') {
      // SQL's prepared statements and the extended protocol's share their names, as in PostgreSQL
      if (this.statements.has(plan.name)) throw new WireError('42P05', `prepared statement "${plan.name}" already exists`);
      const count = this.runner!.parameterCount(plan.query);
      this.statements.set(plan.name, { plan: plan.query, parameterTypes: Array.from({ length: count }, () => PG_TYPE.text), declaredTypes: [] });
      return { fields: [], rows: [], tag: 'PREPARE' };
    }
    return this.cancellable((signal) => this.runner!.run(plan, parameters, signal));
  }

  /**
   * COPY … TO STDOUT: the query's rows as CopyData in the text format, read a batch at a time as a cursor
   * reads them (on PostgreSQL from the server, elsewhere from the result read within the budget), each batch
   * written before the next is read.
   */
  private async copyOut(plan: StatementPlan & { kind: 'copy' }): Promise<ResultSet> {
    const source = await this.cancellable((signal) => this.runner!.openCursor(plan.query, [], signal));
    try {
      this.send(this.messages.copyOutResponse(source.fields.length));
      let count = 0;
      for (;;) {
        const rows = await this.cancellable((signal) => source.next(COPY_BATCH_ROWS, signal));
        for (const row of rows) this.send(this.messages.copyData(Buffer.from(`${row.map(copyText).join('\t')}\n`)));
        count += rows.length;
        await this.flush();
        if (rows.length < COPY_BATCH_ROWS) break;
      }
      this.send(this.messages.copyDone());
      return { fields: [], rows: [], tag: `COPY ${count}` };
    } finally {
      await source.close();
    }
  }

  /** A statement EXECUTE names (prepared by PREPARE or the extended protocol's Parse). */
  private prepared(name: string): StatementPlan {
    const statement = this.statements.get(name);
    if (!statement) throw new WireError('26000', `prepared statement "${name}" does not exist`);
    return statement.plan;
  }

  /** DECLARE: the cursor's query, authorized at Parse, is opened with its parameters. */
  private async declare(plan: StatementPlan & { kind: 'declare' }, parameters: readonly unknown[]): Promise<ResultSet> {
    const inTransaction = this.transaction === 'T';
    this.cursors.admit(plan.cursor, inTransaction);
    const source = await this.cancellable((signal) => this.runner!.openCursor(plan.query, parameters, signal));
    this.cursors.add(plan.cursor, source, inTransaction);
    return { fields: [], rows: [], tag: 'DECLARE CURSOR' };
  }

  /** Refuses what the session's transaction state does not allow. */
  private admit(plan: StatementPlan): void {
    if (this.transaction === 'E' && !(plan.kind === 'session' && (plan.command.kind === 'rollback' || plan.command.kind === 'commit'))) {
      throw new WireError('25P02', 'current transaction is aborted, commands ignored until end of transaction block');
    }
    if (plan.kind === 'vdb' && !plan.readOnly && this.transaction === 'T') {
      throw new WireError('0A000', 'a write inside a transaction block is not supported by the SQL front door: each statement commits on its own, so run writes outside BEGIN … COMMIT');
    }
  }

  private describedFields(plan: StatementPlan): Promise<FieldDescription[]> {
    if (plan.kind === 'empty') return Promise.resolve([]);
    if (plan.kind === 'declare' || plan.kind === 'prepare' || plan.kind === 'copy') return Promise.resolve([]);
    if (plan.kind === 'session') {
      const { command } = plan;
      if (command.kind === 'show' || command.kind === 'show-all') return Promise.resolve(this.shown(command).fields);
      if (command.kind === 'execute') return this.describedFields(this.prepared(command.name));
      if (command.kind === 'set-config') return Promise.resolve([{ name: 'set_config', typeOid: PG_TYPE.text }]);
      return Promise.resolve(command.kind === 'fetch' && !command.move ? this.cursors.fields(command.name) ?? [] : []);
    }
    return this.cancellable((signal) => this.runner!.describe(plan, signal));
  }

  private async cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
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

  private sessionResult(command: DoorCommand): ResultSet | Promise<ResultSet> {
    const done = (tag: string): ResultSet => ({ fields: [], rows: [], tag });
    switch (command.kind) {
      case 'show':
      case 'show-all': return this.shown(command);
      case 'execute': return this.result(this.prepared(command.name), command.values).then((result) => (result === 'empty' ? done('') : result));
      case 'deallocate':
        if (command.name === undefined) this.statements.clear();
        else if (!this.statements.delete(command.name)) throw new WireError('26000', `prepared statement "${command.name}" does not exist`);
        return done(command.name === undefined ? 'DEALLOCATE ALL' : 'DEALLOCATE');
      case 'fetch': return this.cancellable((signal) => this.cursors.fetch(command.name, command.direction, command.move, signal));
      case 'close': return this.cursors.close(command.name).then(() => done(command.name === undefined ? 'CLOSE CURSOR ALL' : 'CLOSE CURSOR'));
      case 'lock':
        if (this.transaction !== 'T') throw new WireError('25P01', 'LOCK TABLE can only be used in transaction blocks');
        if (command.mode !== 'access share') {
          throw new WireError('0A000', `LOCK TABLE … IN ${command.mode.toUpperCase()} MODE is not supported by the SQL front door, which holds no lock between statements: ACCESS SHARE is accepted`);
        }
        this.runner!.lock(command.relations);
        return done('LOCK TABLE');
      case 'set':
      case 'set-config':
        if (command.kind === 'set-config' && command.absent) return { fields: [{ name: 'set_config', typeOid: PG_TYPE.text }], rows: [], tag: 'SELECT 0' };
        this.parameters.set(command.name, command.value);
        if (command.name === 'search_path') this.runner!.searchPath = command.value;
        return command.kind === 'set' ? done('SET') : { fields: [{ name: 'set_config', typeOid: PG_TYPE.text }], rows: [[command.value]], tag: 'SELECT 1' };
      case 'reset':
        if (command.name === undefined) this.parameters.clear();
        else this.parameters.delete(command.name);
        if (command.name === undefined || command.name === 'search_path') this.runner!.searchPath = undefined;
        return done('RESET');
      case 'begin':
        this.transaction = 'T';
        return done('BEGIN');
      case 'commit': {
        const failed = this.transaction === 'E';
        this.transaction = 'I';
        return this.cursors.endTransaction(!failed).then(() => done(failed ? 'ROLLBACK' : 'COMMIT'));
      }
      case 'rollback':
        this.transaction = 'I';
        return this.cursors.endTransaction(false).then(() => done('ROLLBACK'));
      case 'tag':
        if (command.tag === 'DISCARD ALL') return this.cursors.close(undefined).then(() => done(command.tag));
        return done(command.tag);
    }
  }

  private shown(command: DoorCommand & { kind: 'show' | 'show-all' }): ResultSet {
    if (command.kind === 'show-all') {
      const rows = Object.entries(SETTING_DESCRIPTIONS).map(([name, description]) => [settingSpelling(name), this.setting(name) ?? '', description]);
      return { fields: ['name', 'setting', 'description'].map((name) => ({ name, typeOid: PG_TYPE.text })), rows, tag: 'SHOW' };
    }
    const value = this.setting(command.name);
    if (value === undefined) throw new WireError('42704', `unrecognized configuration parameter "${command.name}"`);
    return { fields: [{ name: settingSpelling(command.name), typeOid: PG_TYPE.text }], rows: [[value]], tag: 'SHOW' };
  }

  /** A setting as the client sees it: what it set, else the server's; undefined for one the server has not. */
  private setting(name: string): string | undefined {
    const key = name.toLowerCase();
    // the role the caller's statements run as, which the catalog answers show as session_user
    if (key === 'session_authorization') return this.runner?.role();
    return this.parameters.get(key) ?? SERVER_SETTINGS[key];
  }

  private sendRowDescription(fields: readonly FieldDescription[], formats: readonly number[]): void {
    if (fields.length === 0) this.send(this.messages.bare(BackendMessages.CODE.noData));
    else this.send(this.messages.rowDescription(fields, fields.map((_, index) => formatOf(formats, index))));
  }

  private sendRows(result: ResultSet, formats: readonly number[], from: number, to: number): void {
    const binary = result.fields.map((_, index) => formatOf(formats, index) === 1);
    for (let index = from; index < to; index++) {
      const row = result.rows[index] as (string | null)[];
      this.send(this.messages.dataRow(row.map((cell, column) => {
        if (cell === null) return null;
        return binary[column] ? binaryForm(cell, (result.fields[column] as FieldDescription).typeOid) : Buffer.from(cell);
      })));
    }
  }

  private sendStatementError(error: unknown): void {
    const failure = statementWireError(error, false);
    if (failure.sqlState === 'XX000') this.context.logger.warn({ err: error }, 'SQL front door: a statement failed');
    if (this.transaction === 'T') this.transaction = 'E';
    this.send(this.messages.error('ERROR', failure.sqlState, failure.message, failure.detail));
  }

  /** A FATAL error ends the connection. */
  private async fail(error: WireError): Promise<void> {
    this.send(this.messages.error('FATAL', error.sqlState, error.message, error.detail));
    await this.flush();
    this.end();
  }

  private send(message: Buffer): undefined {
    this.pending.push(message);
    return undefined;
  }

  /**
   * Writes what was collected, in one write; waits (returns a promise) while the client is slow to read,
   * so no answer piles up in memory.
   */
  private flush(): Step {
    if (this.pending.length === 0 || this.phase === 'closed') return undefined;
    const socket = this.connection.socket;
    const written = socket.write(this.pending.length === 1 ? this.pending[0] as Buffer : Buffer.concat(this.pending));
    this.pending = [];
    if (written) return undefined;
    return new Promise<void>((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
  }

  /**
   * Ends a connection whose client broke the protocol's bounds: the error is sent, and nothing more is read
   * from it (reading on would let it keep sending until the grace period ends).
   */
  private drop(error: WireError): void {
    if (this.phase === 'closed') return;
    this.connection.socket.removeAllListeners('data');
    this.send(this.messages.error('FATAL', error.sqlState, error.message));
    this.end();
    this.connection.socket.pause();
  }

  /** Sends what is pending and closes; a client that keeps its side open is cut off after a grace period. */
  private end(): void {
    this.phase = 'closed';
    const socket = this.connection.socket;
    if (this.pending.length > 0) socket.write(Buffer.concat(this.pending));
    this.pending = [];
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  /**
   * A connection that says nothing for `sql.idleTimeoutMs` is closed, as PostgreSQL's idle_session_timeout
   * does; one that has not authenticated within a minute (PostgreSQL's authentication_timeout) too, so that
   * connections that never log in do not hold the slots of `sql.maxConnections`.
   */
  private armIdleTimer(): void {
    if (this.phase === 'closed') return;
    const authenticated = this.phase === 'ready';
    const limit = authenticated ? this.context.idleTimeoutMs : Math.min(this.context.idleTimeoutMs, AUTHENTICATION_TIMEOUT_MS);
    // a message since the timer was set moves the deadline: the timer is set again for what is left; before
    // authentication nothing moves it, however slowly the client sends
    const left = (authenticated ? this.lastActivity : this.acceptedAt) + limit - Date.now();
    this.idleTimer = setTimeout(() => {
      if (this.phase === 'closed') return;
      if (this.running) {
        this.lastActivity = Date.now();
        return this.armIdleTimer();
      }
      // a message came since, or the caller logged in and the longer limit applies
      if ((authenticated && Date.now() - this.lastActivity < limit) || (this.phase === 'ready' && !authenticated)) return this.armIdleTimer();
      this.send(this.messages.error('FATAL', '57P05', authenticated
        ? 'terminating connection due to idle-session timeout'
        : 'terminating connection: no startup and password within the authentication timeout'));
      this.end();
    }, Math.max(left, 0));
    this.idleTimer.unref();
  }
}

/** Bind's values as the door runs them: text as strings, binary ones decoded by their declared type. */
function decodedParameters(statement: PreparedStatement, bound: BoundValues): unknown[] {
  return bound.map(({ value, format }, index) => {
    if (value === null) return null;
    if (format !== 1) return value.toString();
    try {
      return binaryParameter(value, statement.parameterTypes[index] ?? PG_TYPE.text);
    } catch {
      throw new WireError('22P03', `incorrect binary data format in bind parameter ${index + 1}`);
    }
  });
}

/** A message read whole, or the protocol violation (08P01) a malformed one is. */
function decoded<T>(read: () => T): T {
  try {
    return read();
  } catch {
    throw new WireError('08P01', 'invalid message format');
  }
}

/** A value in COPY's text format: NULL is `\N`; backslash, tab, newline and carriage return are escaped. */
function copyText(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r]/g, (character) => COPY_ESCAPES[character] as string);
}

const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** The format of column `index`: none given is text, one applies to all. */
function formatOf(formats: readonly number[], index: number): number {
  if (formats.length === 0) return 0;
  return (formats.length === 1 ? formats[0] : formats[index]) ?? 0;
}
