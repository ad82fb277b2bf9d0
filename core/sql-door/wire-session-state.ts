/**
 * What a connection of the SQL front door remembers between statements: its transaction status, its
 * settings (the startup parameters, then SET and RESET), its prepared statements (PREPARE and the extended
 * protocol's Parse share their names, as in PostgreSQL) and its cursors; and the session statements that
 * read and change them (session-commands.ts says which), answered here without reaching a datasource.
 */
import { SessionCursors } from './cursors.js';
import { PG_TYPE } from './pg-types.js';
import { SERVER_SETTINGS, SETTING_DESCRIPTIONS, settingSpelling } from './session-commands.js';
import type { DoorCommand, ResultSet, StatementPlan, StatementRunner } from './statement-runner.js';
import { WireError } from './wire-errors.js';
import type { FieldDescription } from './wire-messages.js';

/** ReadyForQuery's status: idle, in a transaction block, in a failed one. */
export type TransactionStatus = 'I' | 'T' | 'E';

export interface PreparedStatement {
  plan: StatementPlan;
  /** The type of each parameter: as the client declared it at Parse, else text. */
  parameterTypes: number[];
  /** The types as the client declared them (0: unspecified), for a forwarded statement's Parse. */
  declaredTypes: readonly number[];
  /** The columns, once described. */
  fields?: FieldDescription[];
}

/** What the session statements need of the session that runs them. */
export interface StatementHost {
  readonly runner: StatementRunner;
  /** Runs `work` as the client's running statement, which a CancelRequest aborts. */
  cancellable<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T>;
  /** Runs a plan as a statement of its own (EXECUTE's). */
  result(plan: StatementPlan, parameters: readonly unknown[]): Promise<ResultSet | 'empty'>;
}

export class SessionState {
  transaction: TransactionStatus = 'I';
  /** The open block's savepoints, oldest first, each with the cursors open when it was set. */
  private savepoints: { name: string; cursors: ReadonlySet<string> }[] = [];
  readonly statements = new Map<string, PreparedStatement>();
  readonly cursors: SessionCursors;
  /** The settings the client set: the startup message's parameters (names in lower case), then SET's. */
  readonly parameters = new Map<string, string>();

  /** @param role the role the caller's statements run as once authenticated, which the catalog answers show as session_user */
  constructor(maxResultBytes: number, private readonly role: () => string | undefined) {
    this.cursors = new SessionCursors(maxResultBytes);
  }

  /** A statement failed: a transaction block it was in is failed too. */
  failed(): void {
    if (this.transaction === 'T') this.transaction = 'E';
  }

  /** Refuses what the session's transaction state does not allow. */
  admit(plan: StatementPlan): void {
    if (this.transaction === 'E' && !(plan.kind === 'session' && ['rollback', 'commit', 'rollback-to'].includes(plan.command.kind))) {
      throw new WireError('25P02', 'current transaction is aborted, commands ignored until end of transaction block');
    }
    if (plan.kind === 'vdb' && !plan.readOnly && this.transaction === 'T') {
      throw new WireError('0A000', 'a write inside a transaction block is not supported by the SQL front door: each statement commits on its own, so run writes outside BEGIN … COMMIT');
    }
  }

  /** A statement EXECUTE names (prepared by PREPARE or the extended protocol's Parse). */
  prepared(name: string): StatementPlan {
    const statement = this.statements.get(name);
    if (!statement) throw new WireError('26000', `prepared statement "${name}" does not exist`);
    return statement.plan;
  }

  /** PREPARE: its statement takes text parameters. */
  prepare(plan: StatementPlan & { kind: 'prepare' }, runner: StatementRunner): ResultSet {
    if (this.statements.has(plan.name)) throw new WireError('42P05', `prepared statement "${plan.name}" already exists`);
    const count = runner.parameterCount(plan.query);
    this.statements.set(plan.name, { plan: plan.query, parameterTypes: Array.from({ length: count }, () => PG_TYPE.text), declaredTypes: [] });
    return { fields: [], rows: [], tag: 'PREPARE' };
  }

  /** The columns a session statement answers with, before it runs. */
  fields(command: DoorCommand, describe: (plan: StatementPlan) => Promise<FieldDescription[]>): Promise<FieldDescription[]> {
    if (command.kind === 'show' || command.kind === 'show-all') return Promise.resolve(this.shown(command).fields);
    if (command.kind === 'execute') return describe(this.prepared(command.name));
    if (command.kind === 'set-config') return Promise.resolve([{ name: 'set_config', typeOid: PG_TYPE.text }]);
    return Promise.resolve(command.kind === 'fetch' && !command.move ? this.cursors.fields(command.name) ?? [] : []);
  }

  /** Runs a session statement. */
  run(command: DoorCommand, host: StatementHost): ResultSet | Promise<ResultSet> {
    const done = (tag: string): ResultSet => ({ fields: [], rows: [], tag });
    switch (command.kind) {
      case 'show':
      case 'show-all': return this.shown(command);
      case 'execute': return host.result(this.prepared(command.name), command.values).then((result) => (result === 'empty' ? done('') : result));
      case 'deallocate':
        if (command.name === undefined) this.statements.clear();
        else if (!this.statements.delete(command.name)) throw new WireError('26000', `prepared statement "${command.name}" does not exist`);
        return done(command.name === undefined ? 'DEALLOCATE ALL' : 'DEALLOCATE');
      case 'fetch': return host.cancellable((signal) => this.cursors.fetch(command.name, command.direction, command.move, signal));
      case 'close': return this.cursors.close(command.name).then(() => done(command.name === undefined ? 'CLOSE CURSOR ALL' : 'CLOSE CURSOR'));
      case 'lock':
        if (this.transaction !== 'T') throw new WireError('25P01', 'LOCK TABLE can only be used in transaction blocks');
        if (command.mode !== 'access share') {
          throw new WireError('0A000', `LOCK TABLE … IN ${command.mode.toUpperCase()} MODE is not supported by the SQL front door, which holds no lock between statements: ACCESS SHARE is accepted`);
        }
        host.runner.lock(command.relations);
        return done('LOCK TABLE');
      case 'set':
      case 'set-config':
        if (command.kind === 'set-config' && command.absent) return { fields: [{ name: 'set_config', typeOid: PG_TYPE.text }], rows: [], tag: 'SELECT 0' };
        this.parameters.set(command.name, command.value);
        if (command.name === 'search_path') host.runner.searchPath = command.value;
        return command.kind === 'set' ? done('SET') : { fields: [{ name: 'set_config', typeOid: PG_TYPE.text }], rows: [[command.value]], tag: 'SELECT 1' };
      case 'reset':
        if (command.name === undefined) this.parameters.clear();
        else this.parameters.delete(command.name);
        if (command.name === undefined || command.name === 'search_path') host.runner.searchPath = undefined;
        return done('RESET');
      case 'begin':
        this.transaction = 'T';
        return done('BEGIN');
      case 'commit': {
        const failed = this.transaction === 'E';
        this.transaction = 'I';
        this.savepoints = [];
        return this.cursors.endTransaction(!failed).then(() => done(failed ? 'ROLLBACK' : 'COMMIT'));
      }
      case 'rollback':
        this.transaction = 'I';
        this.savepoints = [];
        return this.cursors.endTransaction(false).then(() => done('ROLLBACK'));
      case 'savepoint':
      case 'release':
      case 'rollback-to': return this.savepoint(command);
      case 'tag':
        if (command.tag === 'DISCARD ALL') return this.cursors.close(undefined).then(() => done(command.tag));
        return done(command.tag);
    }
  }

  /**
   * A savepoint: nothing is written inside a block (writes are refused there), so a savepoint only marks
   * which cursors to close at ROLLBACK TO, which also ends the block's failed state, as PostgreSQL's does.
   */
  private savepoint(command: DoorCommand & { kind: 'savepoint' | 'release' | 'rollback-to' }): ResultSet | Promise<ResultSet> {
    const done = (tag: string): ResultSet => ({ fields: [], rows: [], tag });
    const statement = { 'savepoint': 'SAVEPOINT', 'release': 'RELEASE SAVEPOINT', 'rollback-to': 'ROLLBACK TO SAVEPOINT' }[command.kind];
    if (this.transaction === 'I') throw new WireError('25P01', `${statement} can only be used in transaction blocks`);
    if (command.kind === 'savepoint') {
      this.savepoints.push({ name: command.name, cursors: this.cursors.names() });
      return done('SAVEPOINT');
    }
    const index = this.savepoints.map((savepoint) => savepoint.name).lastIndexOf(command.name);
    const savepoint = this.savepoints[index];
    if (savepoint === undefined) throw new WireError('3B001', `savepoint "${command.name}" does not exist`);
    if (command.kind === 'release') {
      this.savepoints.length = index;
      return done('RELEASE');
    }
    this.savepoints.length = index + 1;
    this.transaction = 'T';
    return this.cursors.closeAllBut(savepoint.cursors).then(() => done('ROLLBACK'));
  }

  /** A setting as the client sees it: what it set, else the server's; undefined for one the server has not. */
  setting(name: string): string | undefined {
    const key = name.toLowerCase();
    if (key === 'session_authorization') return this.role();
    return this.parameters.get(key) ?? SERVER_SETTINGS[key];
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
}
