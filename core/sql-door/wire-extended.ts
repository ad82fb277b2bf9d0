/**
 * The extended query protocol of one connection of the SQL front door: Parse, Bind, Describe, Execute and
 * Close, with the portals they make. After an error, messages are skipped until Sync, as PostgreSQL does. A
 * statement the door forwards to its datasource (statement-runner.ts) goes there with the client's own
 * messages; the others run through the session (its StatementHost) and answer from their result.
 */
import type { WireStatement } from '../plugin-api/sql-dialect.js';
import { binaryParameter, PG_TYPE } from './pg-types.js';
import type { ResultSet, StatementPlan } from './statement-runner.js';
import type { MessageReader, Step, WireConnection } from './wire-connection.js';
import { WireError } from './wire-errors.js';
import { BackendMessages, decoded, FRONTEND, readBind, readExecute, readParse, readTarget, type FieldDescription } from './wire-messages.js';
import { rowDescription, sendRows } from './wire-rows.js';
import type { PreparedStatement, SessionState, StatementHost } from './wire-session-state.js';

type BoundValues = ReturnType<typeof readBind>['parameters'];

interface Portal {
  statement: PreparedStatement;
  /** The values as the client sent them. */
  sentValues: BoundValues;
  /** The values decoded, for a plan the door runs itself; a forwarded plan's are decoded only if it must. */
  parameters?: unknown[];
  resultFormats: number[];
  result?: ResultSet | 'empty';
  /** Rows already sent (an Execute with a row limit leaves the portal suspended). */
  sent: number;
  /** A forwarded portal whose Describe is answered with its Execute, which followed it at once. */
  describeWithRows?: boolean;
}

/** What the extended protocol needs of its session besides its state. */
export interface ExtendedHost extends StatementHost {
  /** Sends a forwarded plan's statement to its datasource; the backend's answer is collected with the rest. */
  forward(plan: StatementPlan & { kind: 'vdb' }, statement: WireStatement): Promise<'forwarded'>;
  /** The columns a plan answers with, without running it where it can. */
  describedFields(plan: StatementPlan): Promise<FieldDescription[]>;
  /** Sends a statement's error (the transaction block, if any, fails). */
  statementFailed(error: unknown): void;
}

export class ExtendedProtocol {
  private readonly portals = new Map<string, Portal>();
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipToSync = false;
  private readonly messages: BackendMessages;

  constructor(private readonly connection: WireConnection, private readonly state: SessionState, private readonly host: ExtendedHost) {
    this.messages = connection.messages;
  }

  /** Sync: the skip ends, and the client learns the transaction status. */
  sync(): Step {
    this.skipToSync = false;
    this.connection.send(this.messages.readyForQuery(this.state.transaction));
    return this.connection.flush();
  }

  /** A simple query ends the skip too. */
  simpleQuery(): void {
    this.skipToSync = false;
  }

  /** One message of the protocol, its body on `reader`: Parse, Bind, Describe, Execute or Close (the session's dispatcher sends no other). */
  handle(type: number, reader: MessageReader): Step {
    switch (type) {
      case FRONTEND.parse: return this.step(() => this.parse(decoded(() => readParse(reader))));
      case FRONTEND.bind: return this.step(() => this.bind(decoded(() => readBind(reader))));
      case FRONTEND.describe: return this.step(() => this.describe(decoded(() => readTarget(reader))));
      case FRONTEND.execute: return this.step(() => this.execute(decoded(() => readExecute(reader))));
      default: return this.step(() => this.close(decoded(() => readTarget(reader)))); // Close
    }
  }

  /** An extended-protocol step: an error is sent and what follows is skipped until Sync. */
  private step(run: () => Step): Step {
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
    this.host.statementFailed(error);
    this.skipToSync = true;
  }

  private parse(message: ReturnType<typeof readParse>): Step {
    const plan = this.host.runner.plan(message.text);
    return plan instanceof Promise ? plan.then((planned) => this.prepare(message, planned)) : this.prepare(message, plan);
  }

  private prepare(message: ReturnType<typeof readParse>, plan: StatementPlan): undefined {
    const count = Math.max(this.host.runner.parameterCount(plan), message.parameterTypes.length);
    const parameterTypes = Array.from({ length: count }, (_, index) => message.parameterTypes[index] || PG_TYPE.text);
    this.state.statements.set(message.statement, { plan, parameterTypes, declaredTypes: message.parameterTypes });
    return this.connection.send(this.messages.bare(BackendMessages.CODE.parseComplete));
  }

  private bind(message: ReturnType<typeof readBind>): undefined {
    const statement = this.state.statements.get(message.statement);
    if (!statement) throw new WireError('26000', `prepared statement "${message.statement}" does not exist`);
    const portal: Portal = { statement, sentValues: message.parameters, resultFormats: message.resultFormats, sent: 0 };
    // a forwarded statement's values go to the database as they are: it checks their form
    if (!this.host.runner.forwards(statement.plan)) portal.parameters = decodedParameters(statement, message.parameters);
    this.portals.set(message.portal, portal);
    return this.connection.send(this.messages.bare(BackendMessages.CODE.bindComplete));
  }

  private forwardPortal(portal: Portal, plan: StatementPlan & { kind: 'vdb' }, describe: 'portal' | 'rows', execute: boolean): Promise<'forwarded'> {
    const { statement, sentValues, resultFormats } = portal;
    return this.host.forward(plan, { text: plan.text, parameterTypes: statement.declaredTypes, describe, execute, parameters: sentValues, resultFormats });
  }

  /**
   * Whether the next message waiting is an Execute of portal `name` for all its rows: drivers send Describe
   * and Execute together (node-postgres, JDBC), and the two are then answered by one forwarded statement.
   */
  private executeFollows(name: string): boolean {
    const next = this.connection.nextMessage();
    if (next === undefined || next[0] !== FRONTEND.execute) return false;
    const end = next.indexOf(0, 5);
    return end > 0 && next.toString('utf8', 5, end) === name && next.length >= end + 5 && next.readInt32BE(end + 1) === 0;
  }

  private async describe(target: ReturnType<typeof readTarget>): Promise<void> {
    if (target.target === 'S') {
      const statement = this.state.statements.get(target.name);
      if (!statement) throw new WireError('26000', `prepared statement "${target.name}" does not exist`);
      const { plan } = statement;
      if (this.host.runner.forwards(plan)) {
        await this.host.forward(plan, { text: plan.text, parameterTypes: statement.declaredTypes, describe: 'statement' });
        return;
      }
      this.connection.send(this.messages.parameterDescription(statement.parameterTypes));
      statement.fields ??= await this.host.describedFields(statement.plan);
      this.connection.send(rowDescription(this.messages, statement.fields, []));
      return;
    }
    // a cursor is a portal too (psycopg 3 describes its named cursor's)
    const cursorFields = this.portals.has(target.name) ? undefined : this.state.cursors.fields(target.name);
    if (cursorFields) return void this.connection.send(rowDescription(this.messages, cursorFields, []));
    const portal = this.portal(target.name);
    const { plan } = portal.statement;
    if (this.host.runner.forwards(plan) && !portal.result) {
      if (this.executeFollows(target.name)) portal.describeWithRows = true;
      else await this.forwardPortal(portal, plan, 'portal', false);
      return;
    }
    portal.parameters ??= decodedParameters(portal.statement, portal.sentValues);
    portal.result ??= await this.host.result(plan, portal.parameters);
    this.connection.send(rowDescription(this.messages, portal.result === 'empty' ? [] : portal.result.fields, portal.resultFormats));
  }

  /** Sends a portal's rows; one described already (node-postgres describes every portal) needs no I/O. */
  private execute(message: ReturnType<typeof readExecute>): Step {
    const portal = this.portal(message.portal);
    if (portal.result) return this.sendPortal(portal, portal.result, message.maxRows);
    const { plan } = portal.statement;
    if (this.host.runner.forwards(plan) && message.maxRows === 0) {
      return this.forwardPortal(portal, plan, portal.describeWithRows === true ? 'portal' : 'rows', true).then(() => undefined);
    }
    // a row limit leaves the portal suspended between Executes: the door runs it and keeps its rows
    portal.parameters ??= decodedParameters(portal.statement, portal.sentValues);
    return this.host.result(plan, portal.parameters).then((result) => {
      portal.result ??= result;
      return this.sendPortal(portal, portal.result, message.maxRows);
    });
  }

  private sendPortal(portal: Portal, result: ResultSet | 'empty', maxRows: number): undefined {
    const { connection, messages } = this;
    if (result === 'empty') return connection.send(messages.bare(BackendMessages.CODE.emptyQuery));
    const end = maxRows > 0 ? Math.min(result.rows.length, portal.sent + maxRows) : result.rows.length;
    sendRows(messages, (message) => connection.send(message), result, portal.resultFormats, portal.sent, end);
    portal.sent = end;
    if (end < result.rows.length) return connection.send(messages.bare(BackendMessages.CODE.portalSuspended));
    return connection.send(messages.commandComplete(result.tag));
  }

  private close(target: ReturnType<typeof readTarget>): undefined {
    if (target.target === 'S') this.state.statements.delete(target.name);
    else this.portals.delete(target.name);
    return this.connection.send(this.messages.bare(BackendMessages.CODE.closeComplete));
  }

  private portal(name: string): Portal {
    const portal = this.portals.get(name);
    if (!portal) throw new WireError('34000', `portal "${name}" does not exist`);
    return portal;
  }
}

/** Bind's values as the door runs them: text as strings, binary ones decoded by their declared type. */
function decodedParameters(statement: PreparedStatement, sentValues: BoundValues): unknown[] {
  return sentValues.map(({ value, format }, index) => {
    if (value === null) return null;
    if (format !== 1) return value.toString();
    try {
      return binaryParameter(value, statement.parameterTypes[index] ?? PG_TYPE.text);
    } catch {
      throw new WireError('22P03', `incorrect binary data format in bind parameter ${index + 1}`);
    }
  });
}
