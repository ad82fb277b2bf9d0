/**
 * The journal of action runs (docs/actions.md#the-journal): where each run, its request, each operation's
 * outcome and what its compensation needs are kept, in a schema of the service's own on the database the
 * action writes, so that a run a crash left unfinished can be undone by any instance after it.
 */
import { randomUUID } from 'node:crypto';
import type { ActionJournalSql, Datasource, SqlExecutor } from '../../plugin-api/sql-dialect.js';
import { runtimeOver } from '../../sql/datasource-runtime.js';
import { statementFailure } from '../../sql/statement-failure.js';

/** How the journals of this process behave (`actions` of service.yaml). */
export interface JournalSettings {
  /** `instanceId`: shown in the admin routes; runs of this instance left by an earlier process are recovered at start. */
  instance: string;
  /** This process, as the owner of the runs it starts or recovers. */
  owner: string;
  /** How long a run stays its owner's without a heartbeat (`actions.leaseSeconds`). */
  leaseSeconds: number;
  /** How long an `Idempotency-Key` and its run are kept (`actions.idempotencyTtlSeconds`). */
  idempotencyTtlSeconds: number;
  /** The time limit of each journal statement the service runs as itself. */
  timeoutMs: number;
  observer?: ActionRunObserver | undefined;
}

/** How recovery finished a run: every step undone (the run ends `recovered`), or one left for a person. */
export type RecoveryOutcome = 'compensated' | 'needs_attention';

/** What the journal reports (docs/observability.md): each run left for a person to repair, each run recovery finished. */
export interface ActionRunObserver {
  runNeedsAttention(action: string): void;
  runRecovered(action: string, outcome: RecoveryOutcome): void;
}

/** The run states of the journal. */
export type RunState = 'running' | 'compensating' | 'completed' | 'failed' | 'recovered' | 'needs_attention';

/** What undoes one operation, kept with its step: the statement, its datasource and the role it runs as. */
export interface CompensationRecord {
  datasource: string;
  /** The database role the operation ran as; null where the database does not enforce roles. */
  role: string | null;
  sql: string;
  bindings: unknown[];
}

/**
 * What the journal keeps to undo a step: the compensation, `unresolved` (why it could not be built: a value
 * a later step had not yet put in the context), or null for an operation without a rollback.
 */
export type StepCompensation = CompensationRecord | { unresolved: string } | null;

/** One operation of a run, as the journal holds it. */
export interface JournalStep {
  position: number;
  name: string;
  status: string;
  affectedRows: number;
  compensation: StepCompensation;
  compensationStatus: 'none' | 'compensated' | 'failed';
  doneAt: string;
  compensatedAt: string | null;
  problem: string | null;
}

/** One run, as the admin route shows it. */
export interface JournalRun {
  run: string;
  action: string;
  state: RunState;
  request: Record<string, unknown>;
  idempotencyKey: string | null;
  instance: string;
  /** The process that owns it now. */
  owner: string;
  startedAt: string;
  finishedAt: string | null;
  leaseUntil: string;
  response: StoredAnswer | null;
  problem: Record<string, unknown> | null;
  steps: JournalStep[];
}

/** The answer a finished run gave, replayed for a retry with the same `Idempotency-Key`. */
export type StoredAnswer =
  | { ok: true; body: unknown }
  | { ok: false; code: string; message: string; details: Record<string, unknown> | null };

const BEGIN_ATTEMPTS = 5;

/** A deadlock or serialization failure as the one classification reads its code: PostgreSQL's SQLSTATEs, mysql2's errno name. */
const DEADLOCK_CODES: ReadonlySet<string> = new Set(['40001', '40P01', 'ER_LOCK_DEADLOCK']);

/** What `begin` found where the key was taken: the earlier run. */
export interface EarlierRun {
  run: string;
  state: RunState;
  hash: string | null;
  response: StoredAnswer | null;
}

/** The journal on one datasource: its SQL, its secret, and the service's own way to it. */
export class ActionJournal {
  constructor(
    readonly datasource: Datasource,
    private readonly sql: ActionJournalSql,
    private readonly secret: string,
    readonly settings: JournalSettings,
    /** Whether callers' roles may call the journal: then a step is written in its operation's own transaction. */
    private readonly callable: boolean,
  ) {}

  /** Whether an operation on `datasource` is journaled in its own transaction (the journal's database, callable by its role). */
  sharesTransactionsWith(datasource: Datasource): boolean {
    return this.callable && datasource.name === this.datasource.name;
  }

  get name(): string {
    return this.datasource.name;
  }

  /**
   * One journal command through `executor`: the caller's transaction where the journal is written with the
   * operation it records, the service's own login otherwise.
   */
  async call(command: string, payload: Record<string, unknown>, executor?: SqlExecutor): Promise<unknown> {
    const bindings = [this.secret, command, JSON.stringify(payload)];
    const result = executor
      ? await executor.query(this.sql.callSql, bindings)
      : await runtimeOver(this.datasource).query(this.sql.callSql, bindings, { timeoutMs: this.settings.timeoutMs });
    const answer = result.rows[0]?.['result'];
    return typeof answer === 'string' ? JSON.parse(answer) : (answer ?? null);
  }

  /** Records a new run; where its key is taken (and still kept), the earlier run instead. */
  async begin(run: string, action: string, request: Record<string, unknown>, key: string | undefined, hash: string | undefined): Promise<EarlierRun | undefined> {
    const { instance, owner, leaseSeconds, idempotencyTtlSeconds } = this.settings;
    const payload = { run, action, request, key: key ?? null, hash: hash ?? null, instance, owner, lease: leaseSeconds, ttl: idempotencyTtlSeconds };
    // requests racing for one key may deadlock on its unique index (MariaDB): the loser tries again and finds the winner's run
    for (let attempt = 1; ; attempt += 1) {
      try {
        const earlier = await this.call('begin', payload);
        return earlier === null ? undefined : earlier as EarlierRun;
      } catch (error) {
        if (attempt >= BEGIN_ATTEMPTS || !DEADLOCK_CODES.has(statementFailure(error).code ?? '')) throw error;
      }
    }
  }

  /** Sets a run's state (and answer, or what a person needs to repair it); `lease` renews the lease, 0 lets it lapse now. */
  setState(run: string, state: RunState, extra: { response?: StoredAnswer; problem?: Record<string, unknown>; lease?: number } = {}): Promise<unknown> {
    return this.call('state', { run, state, ...extra });
  }

  /**
   * Records an operation of a run this process owns: through `executor`, the operation's own transaction,
   * where the journal shares its database. Refused once recovery has taken the run over.
   */
  step(run: string, step: StepRecord, executor?: SqlExecutor, opening: { begin?: Record<string, unknown> } = {}, finish?: StoredAnswer): Promise<unknown> {
    return this.call('step', { run, owner: this.settings.owner, ...step, ...opening, ...(finish === undefined ? {} : { finish }) }, executor);
  }

  /** Records a compensation's outcome, in its own transaction where it can; refused for a step compensated already. */
  compensated(run: string, position: number, status: 'compensated' | 'failed', problem: string | null, executor?: SqlExecutor): Promise<unknown> {
    return this.call('compensated', { run, owner: this.settings.owner, position, status, problem }, executor);
  }

  /** Renews the lease of a run this process owns. */
  renew(run: string): Promise<unknown> {
    return this.call('lease', { run, owner: this.settings.owner, lease: this.settings.leaseSeconds });
  }

  /** Takes one unfinished run whose owner is gone (its lease lapsed, or an earlier process of this instance): at most one instance gets it. */
  async claim(): Promise<JournalRun | undefined> {
    const { instance, owner, leaseSeconds } = this.settings;
    const run = await this.call('claim', { instance, owner, lease: leaseSeconds });
    return run === null ? undefined : run as JournalRun;
  }

  async get(run: string): Promise<JournalRun | undefined> {
    const found = await this.call('get', { run });
    return found === null ? undefined : found as JournalRun;
  }

  async list(filter: { state?: string | undefined; action?: string | undefined; limit: number }): Promise<Omit<JournalRun, 'request' | 'steps'>[]> {
    return await this.call('list', { state: filter.state ?? null, action: filter.action ?? null, limit: filter.limit }) as Omit<JournalRun, 'request' | 'steps'>[];
  }

  /** Deletes finished runs past the keys' time to live. */
  purge(): Promise<unknown> {
    return this.call('purge', { ttl: this.settings.idempotencyTtlSeconds });
  }
}

/** The journals of the service's datasources, and which one a run is written to. */
export class ActionJournals {
  private constructor(
    private readonly journals: ReadonlyMap<string, ActionJournal>,
    /** `actions.journal.datasource`: where every run is journaled, whatever it writes. */
    private readonly home: string | undefined,
  ) {}

  static empty(): ActionJournals {
    return new ActionJournals(new Map(), undefined);
  }

  /**
   * Creates what is missing of the journal on each datasource whose dialect keeps one, as the service's login,
   * and reads its secret; where callers run on a login per role, lets each role's login call it. A datasource
   * whose journal cannot be set up is handed to `unprepared` (which may throw) and keeps none.
   */
  static async prepare(
    datasources: readonly { name: string; datasource: Datasource; roles: readonly string[]; callable: boolean }[], settings: Omit<JournalSettings, 'owner'>, home: string | undefined,
    unprepared: (name: string, error: unknown) => void,
  ): Promise<ActionJournals> {
    const journals = new Map<string, ActionJournal>();
    const owner = randomUUID();
    for (const { name, datasource, roles, callable } of datasources) {
      const sql = datasource.dialect.actionJournal;
      if (!sql) continue;
      try {
        const secret = await datasource.transaction(async (transaction) => {
          for (const statement of sql.setupSql) await transaction.query(statement, []);
          for (const role of roles) for (const statement of sql.grantSql(role)) await transaction.query(statement, []);
          return String((await transaction.query(sql.secretSql, [])).rows[0]?.['secret']);
        });
        // by the datasource's own name, which its operations' targets carry
        journals.set(datasource.name, new ActionJournal(datasource, sql, secret, { ...settings, owner }, callable));
      } catch (error) {
        unprepared(name, error);
      }
    }
    return new ActionJournals(journals, home === undefined ? undefined : datasources.find((entry) => entry.name === home)?.datasource.name);
  }

  /** The journal a run writing first to `datasource` is kept in: `actions.journal.datasource`, or that datasource's own. */
  for(datasource: Datasource): ActionJournal | undefined {
    return this.journals.get(this.home ?? datasource.name);
  }

  /** The journal of one datasource, by name. */
  named(name: string): ActionJournal | undefined {
    return this.journals.get(name);
  }

  all(): ActionJournal[] {
    return [...this.journals.values()];
  }
}

/** A step of a run as `JournaledRun.step` records it. */
export interface StepRecord {
  position: number;
  name: string;
  status: 'started' | 'done';
  rows: number;
  compensation: StepCompensation;
}

/**
 * One run of the journal, as the process running it writes it. A run without an `Idempotency-Key` is opened
 * by its first step, in that operation's transaction (one statement less per run); the last operation's
 * step may close it `completed` in the same way.
 */
export class JournaledRun {
  private opened: boolean;
  private opening = false;

  constructor(
    readonly journal: ActionJournal,
    readonly id: string,
    /** What opens the run when its first step does; undefined when `begin` opened it already. */
    private readonly pending: { action: string; request: Record<string, unknown>; hash: string } | undefined,
  ) {
    this.opened = pending === undefined;
  }

  /**
   * Records a step (through `executor`, the operation's transaction, where they share a database); opens the
   * run with it when not yet done, and closes it `completed` with `finish`.
   */
  step(step: StepRecord, executor?: SqlExecutor, finish?: StoredAnswer): Promise<unknown> {
    const { instance, owner, leaseSeconds } = this.journal.settings;
    const opening = this.opened || !this.pending ? {} : { begin: { ...this.pending, instance, owner, lease: leaseSeconds } };
    this.opening = !this.opened;
    return this.journal.step(this.id, step, executor, opening, finish);
  }

  /** The transaction of the last step committed: the run is in the journal. */
  committed(): void {
    if (this.opening) this.opened = true;
    this.opening = false;
  }

  /** Opens the run on its own, where no step has yet (a failure before any operation was journaled). */
  private async open(): Promise<void> {
    if (this.opened || !this.pending) return;
    await this.journal.begin(this.id, this.pending.action, this.pending.request, undefined, this.pending.hash);
    this.opened = true;
  }

  async setState(state: RunState, extra: { response?: StoredAnswer; problem?: Record<string, unknown>; lease?: number } = {}): Promise<void> {
    await this.open();
    await this.journal.setState(this.id, state, extra);
  }

  compensated(position: number, status: 'compensated' | 'failed', problem: string | null, executor?: SqlExecutor): Promise<unknown> {
    return this.journal.compensated(this.id, position, status, problem, executor);
  }

  async renew(): Promise<void> {
    if (this.opened) await this.journal.renew(this.id);
  }

  /** Whether recovery took the run over (its owner is another process now). */
  async takenOver(): Promise<boolean> {
    if (!this.opened) return false;
    const found = await this.journal.get(this.id);
    return found !== undefined && found.owner !== this.journal.settings.owner;
  }
}
