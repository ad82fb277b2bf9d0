import { offAbort, onAbort, type WorkerRequestLimit } from '../../core/plugin-api/adapter-kit.js';
import { TEXT_OIDS } from '../postgres/postgres-types.js';
import { statementCanceled, transactionAborted, connectionFailure } from './pglite-errors.js';
import type { PgliteRows, PgliteSetup, SessionScope } from './pglite-messages.js';
import { CutOff, PgliteThread, type Turn } from './pglite-thread.js';

/** A statement's time limit when its caller gives none: nothing may hold the single connection forever. */
export const DEFAULT_STATEMENT_LIMIT_MS = 30_000;
/** Opening (a cold start takes seconds), an init script, a snapshot: one that never ends must not hang startup. */
export const SETUP_LIMIT_MS = 300_000;
/** A clean close; past it the thread is terminated anyway. */
const CLOSE_LIMIT_MS = 10_000;
/** Single statements sent to the worker ahead of their turn, so that it never waits for this thread between them. */
const MAX_IN_FLIGHT = 4;
/**
 * How long a caller's read-only statement may hold the worker while a statement of another caller waits:
 * past it the worker is ended and the statement runs again after the other's. Short statements never reach
 * it; a long one under steady contention from others may run out of its time limit instead.
 */
const TURN_MS = 500;
/** At least how long a lane whose statement was preempted waits before its next statement starts (`suspended`). */
const SUSPEND_MS = 2_000;
/** setTimeout fires at once past this. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A transaction, from its BEGIN to its COMMIT or ROLLBACK: it holds the single session meanwhile, so no
 * other caller's statement runs inside it (it would see its uncommitted rows, and set its role).
 */
export interface TransactionTicket {
  /** The worker it began on: its statements fail (25P02) on any other. */
  readonly epoch: number;
}

/** What bounds one statement, and where it belongs. */
export interface StatementOptions {
  /**
   * Over it the statement fails with 57014; absent (or not a positive number): DEFAULT_STATEMENT_LIMIT_MS.
   * It counts from when the call was accepted: time spent waiting for its turn is part of it.
   */
  timeoutMs?: number | undefined;
  /** Aborted: the statement is canceled (57014), also while it waits its turn. */
  signal?: AbortSignal | undefined;
  /** Only this many rows (plus one, to tell a cut) cross from the worker. */
  maxRows?: number | undefined;
  /** Only rows within this many bytes (plus the one past it) cross from the worker (`QueryOptions.maxBytes`). */
  maxBytes?: number | undefined;
  /** The transaction the statement belongs to (from `begin`): it fails (25P02) if its worker was ended since. */
  transaction?: TransactionTicket | undefined;
  /** A caller's statement outside a transaction: the role and mode it runs in (pglite-messages.ts). */
  scope?: SessionScope | undefined;
  /** A caller's statement planned for this run's values, not kept prepared (`QueryOptions.planEachRun`). */
  planEachRun?: boolean | undefined;
  /** Whose turn the call takes: a caller's role set; absent: the scope's role, or else the service's own lane. */
  lane?: string | undefined;
}

/** How a call waits for its turn. */
interface Call {
  lane: string;
  /** `Date.now()` ms when its time is up: it leaves the queue then with 57014. */
  deadline: number;
  /** A single statement outside a transaction: it may be sent while others are under way. */
  ahead: boolean;
  /** The transaction it belongs to: it runs while that transaction holds the session. */
  owner: TransactionTicket | undefined;
  /** Closing: runs once nothing else waits. */
  last: boolean;
  signal: AbortSignal | undefined;
}

interface Job extends Call {
  /** In order of acceptance: within a lane, the oldest goes first. */
  seq: number;
  run(): Promise<void>;
  /** Leaves the queue with `error`, when it waits there. */
  leave(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The main thread's side of a PGlite datasource: one worker thread at a time (pglite-thread.ts), and the
 * queue of the calls waiting for it, taken in turns by lane (a caller's role set, or the service's own
 * lane): the next call is the oldest of the lane served least recently, so that no caller's backlog delays
 * another's statement by more than one turn. Up to MAX_IN_FLIGHT single statements are sent at once (the
 * worker runs them one by one), anything else alone. A transaction holds the session from BEGIN to its end:
 * calls of others wait.
 *
 * Every call's time limit counts from its acceptance: one whose time runs out while it waits leaves the
 * queue with 57014. A statement past its deadline ends its worker; so does a caller's read-only statement
 * that has held the worker for TURN_MS while a statement of another caller waits (it runs again after
 * that one's turn, within its own time limit). The same database is then reopened in a new worker (in
 * memory: the spare, opened ahead from the snapshot once the session is restricted), where the calls queued
 * run, and the statements sent behind the ended one run again. A file-backed database loses only the
 * canceled statement and its open transaction; an in-memory one starts again from its snapshot.
 */
export class PgliteHost {
  private opening: Promise<PgliteThread> | undefined;
  /** The last worker opened, once open. */
  private live: PgliteThread | undefined;
  /** In memory: a worker opened from the snapshot, to take over at once from one ended (`prepareSpare`). */
  private spare: { thread: Promise<PgliteThread>; ready: boolean; snapshot: Uint8Array | undefined; user: string | undefined } | undefined;
  /** Lanes whose statement was preempted, and until when they wait (`suspended`). */
  private readonly suspensions = new Map<string, number>();
  private callersServed = false;
  private epochs = 0;
  private readonly queue: Job[] = [];
  private accepted = 0;
  /** When each lane was last served (a count of turns taken): the one served longest ago goes next. */
  private readonly served = new Map<string, number>();
  private turns = 0;
  private running = 0;
  /** A call that runs alone is under way. */
  private alone = false;
  /** Set while a statement of one caller holds the worker and another caller's waits. */
  private turnTimer: NodeJS.Timeout | undefined;
  /** The transaction holding the session. */
  private holder: TransactionTicket | undefined;
  private snapshot: Uint8Array | undefined;
  private user: string | undefined;
  private closing: Promise<void> | undefined;

  /**
   * @param dataDir absolute folder of the database files; undefined: in memory
   * @param name the datasource's name, which names the worker thread
   */
  constructor(private readonly dataDir: string | undefined, private readonly name: string) {}

  /** The login the session runs as once restricted (`restrict`); undefined: the bootstrap superuser. */
  get sessionUser(): string | undefined {
    return this.user;
  }

  /** True once `close` was called: calls are refused from then on. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Opens the first worker; rejects (08006, the cause attached) when PGlite cannot open the database. */
  start(): Promise<void> {
    return this.onThread({}, async () => undefined, { deadlineMs: SETUP_LIMIT_MS });
  }

  /** One statement with `$n` parameters. */
  query(sql: string, params: unknown[], options: StatementOptions = {}): Promise<PgliteRows> {
    const { maxRows, maxBytes, scope, transaction, planEachRun } = options;
    const command = {
      kind: 'query' as const, sql, params,
      ...(maxRows === undefined ? {} : { maxRows }), ...(maxBytes === undefined ? {} : { maxBytes }), ...(scope === undefined ? {} : { scope }),
      ...(planEachRun === true ? { planEachRun } : {}),
    };
    const single = transaction === undefined;
    return this.onThread(options, (thread, limit) => thread.request(command, limit), { ahead: single, preemptible: single && scope?.readOnly === true });
  }

  /** A script of any number of statements, without parameters. */
  exec(sql: string, options: StatementOptions = {}): Promise<void> {
    return this.onThread(options, async (thread, limit) => {
      await thread.request({ kind: 'exec', sql }, limit);
    });
  }

  /**
   * Runs BEGIN, as the session's login (set back from a caller's scope); resolves with the ticket the
   * transaction's statements must give. The session is held until `end(ticket)`.
   */
  begin(options: StatementOptions = {}): Promise<TransactionTicket> {
    return this.onThread(options, async (thread, limit) => {
      await thread.request({ kind: 'query', sql: 'begin', params: [] }, limit);
      const ticket: TransactionTicket = { epoch: thread.epoch };
      this.holder = ticket;
      return ticket;
    });
  }

  /** The transaction ended (committed, rolled back, or lost with its worker): other calls run again. */
  end(ticket: TransactionTicket): void {
    if (this.holder !== ticket) return;
    this.holder = undefined;
    this.pump();
  }

  /** In memory: keeps the present state as the one a reopened worker starts from. A file-backed database needs none. */
  keepSnapshot(): Promise<void> {
    if (this.dataDir !== undefined) return Promise.resolve();
    return this.onThread({}, async (thread, limit) => {
      this.snapshot = await thread.request({ kind: 'dump' }, limit);
      this.dropSpare();
    }, { deadlineMs: SETUP_LIMIT_MS });
  }

  /**
   * Restricts the session to `user`, alone (no other call runs until it ends): reopens it as the superuser
   * when it was restricted before, runs `grant` in a transaction of that superuser session, then reopens it
   * as `user`, which every later reopen does likewise. When `grant` fails, the session is reopened as it was
   * and the error rethrown. A reopen that fails rejects, and later calls then fail too (503), never falling
   * back to the superuser.
   */
  restrict(user: string, grant: (query: (sql: string, params: unknown[]) => Promise<PgliteRows>) => Promise<void>): Promise<void> {
    return this.onThread({}, async (thread, limit) => {
      const before = this.user;
      const session = before === undefined ? thread : await this.reopen(thread, limit, undefined);
      const query = (sql: string, params: unknown[]) => session.request({ kind: 'query', sql, params }, limit);
      try {
        await query('begin', []);
        try {
          await grant(query);
        } catch (error) {
          await query('rollback', []).catch(() => undefined);
          throw error;
        }
        await query('commit', []);
      } catch (error) {
        if (before !== undefined) await this.reopen(session, limit, before);
        throw error;
      }
      await this.reopen(session, limit, user);
    }, { deadlineMs: SETUP_LIMIT_MS });
  }

  /** Closes after the calls already queued; later calls fail as on a closed PGlite. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.enqueue({ lane: '', deadline: Date.now() + SETUP_LIMIT_MS, ahead: false, owner: undefined, last: true, signal: undefined }, async () => {
      clearTimeout(this.turnTimer);
      this.dropSpare();
      const opening = this.opening;
      this.opening = undefined;
      const thread = await opening?.catch(() => undefined);
      if (thread) await retire(thread);
    });
    return this.closing;
  }

  /**
   * Runs `work` on the current worker, in turn, with the call's limit (its deadline counted from now). A
   * worker that its statement ended (over its limit, aborted, preempted, crashed) is replaced at once,
   * before the next call runs.
   */
  private onThread<T>(
    options: StatementOptions,
    work: (thread: PgliteThread, limit: WorkerRequestLimit<Turn>) => Promise<T>,
    how: { ahead?: boolean; preemptible?: boolean; deadlineMs?: number } = {},
  ): Promise<T> {
    const { transaction, signal } = options;
    const lane = options.lane ?? options.scope?.role ?? '';
    const deadline = Date.now() + (how.deadlineMs ?? limitMs(options.timeoutMs));
    const limit: WorkerRequestLimit<Turn> = { deadline, signal, tag: { lane, preemptible: how.preemptible === true } };
    if (lane !== '' && !this.callersServed) {
      this.callersServed = true;
      this.prepareSpare();
    }
    return this.enqueue({ lane, deadline, ahead: how.ahead === true, owner: transaction, last: false, signal }, async () => {
      const thread = await beforeDeadline(this.current(), limit);
      if (transaction !== undefined && transaction.epoch !== thread.epoch) throw transactionAborted();
      try {
        return await work(thread, limit);
      } finally {
        if (thread.stopped && thread.epoch === this.epochs && this.closing === undefined) this.open(thread.terminate());
      }
    });
  }

  /**
   * Queues a call until its turn. A call the worker's end cut off (CutOff) waits again for a turn, as long
   * as its time lasts; one whose time ran out meanwhile, or whose signal aborted, fails with 57014.
   */
  private enqueue<T>(call: Call, attempt: () => Promise<T>): Promise<T> {
    if (this.closing !== undefined && !call.last) return Promise.reject(new Error('PGlite is closed'));
    const { signal } = call;
    if (signal?.aborted) return Promise.reject(statementCanceled('user request'));
    return new Promise<T>((resolve, reject) => {
      const aborted = () => job.leave(statementCanceled('user request'));
      const settle = (error: unknown, value?: T) => {
        if (signal) offAbort(signal, aborted);
        if (error === undefined) resolve(value as T);
        else reject(error);
      };
      const job: Job = {
        ...call,
        seq: ++this.accepted,
        timer: undefined,
        leave: (error) => {
          const at = this.queue.indexOf(job);
          if (at < 0) return;
          this.queue.splice(at, 1);
          clearTimeout(job.timer);
          settle(error);
        },
        run: async () => {
          try {
            settle(undefined, await attempt());
          } catch (error) {
            if (!(error instanceof CutOff)) return settle(error);
            if (signal?.aborted) return settle(statementCanceled('user request'));
            if (Date.now() >= job.deadline) return settle(statementCanceled('statement timeout'));
            this.wait(job);
          }
        },
      };
      if (signal) onAbort(signal, aborted);
      this.wait(job);
      this.pump();
    });
  }

  /** Puts `job` in the queue until its turn or its deadline. */
  private wait(job: Job): void {
    this.queue.push(job);
    job.timer = setTimeout(() => job.leave(statementCanceled('statement timeout')), Math.min(Math.max(job.deadline - Date.now(), 0), MAX_TIMER_MS));
  }

  /**
   * The call to start next, among those allowed (a transaction's own while it holds the session; closing
   * once nothing else waits): the oldest of the lane served least recently.
   */
  private next(): Job | undefined {
    let best: Job | undefined;
    let bestServed = 0;
    for (const job of this.queue) {
      if (this.holder !== undefined ? job.owner !== this.holder : (job.last && this.queue.length > 1) || this.suspended(job.lane)) continue;
      const served = this.served.get(job.lane) ?? 0;
      if (best === undefined || served < bestServed || (served === bestServed && job.seq < best.seq)) {
        best = job;
        bestServed = served;
      }
    }
    return best;
  }

  /**
   * Whether `lane` waits after one of its statements was preempted: for SUSPEND_MS, and in memory until a
   * spare is ready, so that each preemption serves the others at once and costs at most one reopen per spare.
   */
  private suspended(lane: string): boolean {
    const until = this.suspensions.get(lane);
    if (until === undefined) return false;
    if (Date.now() < until || this.spare?.ready === false) return true;
    this.suspensions.delete(lane);
    return false;
  }

  private suspend(lane: string): void {
    this.suspensions.set(lane, Date.now() + SUSPEND_MS);
    setTimeout(() => this.pump(), SUSPEND_MS).unref();
  }

  /** Starts what may start: the next call, alone or ahead. */
  private pump(): void {
    while (!this.alone) {
      const next = this.next();
      if (next === undefined) break;
      // a transaction's own calls are never sent ahead: while one holds the session, everything runs alone
      const { ahead } = next;
      if (ahead ? this.running >= MAX_IN_FLIGHT : this.running > 0) break;
      this.queue.splice(this.queue.indexOf(next), 1);
      clearTimeout(next.timer);
      this.served.set(next.lane, ++this.turns);
      this.running += 1;
      this.alone = !ahead;
      void next.run().finally(() => {
        this.running -= 1;
        if (!ahead) this.alone = false;
        this.pump();
      });
    }
    this.watch();
  }

  /**
   * Ends the worker's turn when a caller's read-only statement has run TURN_MS while a statement of another
   * caller waits (queued here, or sent behind it); otherwise checks again when that could first be so.
   * The service's own calls neither end nor are ended.
   */
  private watch(): void {
    clearTimeout(this.turnTimer);
    this.turnTimer = undefined;
    const thread = this.live;
    const running = thread?.running;
    const turn = running?.tag;
    if (thread === undefined || running === undefined || turn === undefined || !turn.preemptible || running.since === 0) return;
    const other = (lane: string | undefined) => lane !== undefined && lane !== '' && lane !== turn.lane;
    if (!this.queue.some((job) => other(job.lane)) && ![...thread.behind()].some((behind) => other(behind?.lane))) return;
    const due = running.since + TURN_MS - Date.now();
    if (due > 0) {
      this.turnTimer = setTimeout(() => this.watch(), due);
      return;
    }
    this.suspend(turn.lane);
    thread.preempt();
  }

  /**
   * Ends `thread` and opens the database in a new one whose session runs as `user` (undefined: the
   * superuser). In memory, the new worker starts from the present state, which becomes the snapshot.
   */
  private async reopen(thread: PgliteThread, limit: WorkerRequestLimit<Turn>, user: string | undefined): Promise<PgliteThread> {
    if (this.dataDir === undefined) this.snapshot = await thread.request({ kind: 'dump' }, limit);
    await retire(thread);
    this.user = user;
    this.dropSpare();
    const opened = await this.open();
    // the service serves with a spare ready (in memory): the first runaway costs the others no reopen
    await this.spare?.thread.catch(() => undefined);
    return opened;
  }

  /** The open worker; one that failed to open, or stopped between calls (crashed), is replaced first. */
  private async current(): Promise<PgliteThread> {
    let opening = this.opening ?? this.open();
    try {
      const thread = await opening;
      if (!thread.stopped) return thread;
      opening = this.open(thread.terminate());
      return await opening;
    } catch (error) {
      // the next call tries again
      if (this.opening === opening) this.opening = undefined;
      throw error;
    }
  }

  /** Opens a new worker once `after` (the old one's end) resolved: never two PGlite on one folder at once. */
  private open(after: Promise<void> = Promise.resolve()): Promise<PgliteThread> {
    const epoch = ++this.epochs;
    const opening = after.then(() => this.spawn(epoch));
    opening.then((thread) => {
      if (this.epochs === epoch) this.live = thread;
    }, () => undefined);
    // a failed reopen is reported to the next call
    opening.catch(() => undefined);
    this.opening = opening;
    return opening;
  }

  /**
   * The spare, when one was opened for the present snapshot and login (ready, or the soonest to be), else a
   * worker opened now beside the next spare; then the next spare.
   */
  private async spawn(epoch: number): Promise<PgliteThread> {
    const spare = this.spare;
    this.spare = undefined;
    let thread: PgliteThread | undefined;
    if (spare !== undefined && spare.snapshot === this.snapshot && spare.user === this.user) {
      thread = await spare.thread.catch(() => undefined);
      if (thread?.stopped) thread = undefined;
    } else if (spare !== undefined) {
      void spare.thread.then((stale) => stale.terminate(), () => undefined);
    }
    if (thread === undefined) {
      this.prepareSpare();
      thread = await this.openThread();
    }
    thread.epoch = epoch;
    this.prepareSpare();
    return thread;
  }

  /**
   * In memory, once the session is restricted (the end of startup) or callers are served: opens a worker
   * from the snapshot that waits, idle, to replace one ended (a reopen takes seconds; taking the spare,
   * none). Costs the memory of a second instance.
   */
  private prepareSpare(): void {
    if (this.dataDir !== undefined || this.snapshot === undefined || this.spare !== undefined || this.closing !== undefined) return;
    if (this.user === undefined && !this.callersServed) return;
    const spare = { thread: this.openThread(), ready: false, snapshot: this.snapshot, user: this.user };
    this.spare = spare;
    // a lane suspended until a spare is ready may go on
    spare.thread.then(() => {
      spare.ready = true;
      this.pump();
    }, () => undefined);
  }

  private dropSpare(): void {
    const spare = this.spare;
    this.spare = undefined;
    void spare?.thread.then((thread) => thread.terminate(), () => undefined);
  }

  private async openThread(): Promise<PgliteThread> {
    const thread = new PgliteThread(0, `pglite ${this.name}`, () => this.watch());
    const setup: PgliteSetup = {
      textOids: TEXT_OIDS,
      ...(this.dataDir === undefined ? {} : { dataDir: this.dataDir }),
      ...(this.snapshot === undefined ? {} : { snapshot: this.snapshot }),
      ...(this.user === undefined ? {} : { sessionUser: this.user }),
    };
    try {
      await thread.request({ kind: 'open', setup }, { deadline: Date.now() + SETUP_LIMIT_MS });
      return thread;
    } catch (error) {
      await thread.terminate();
      throw connectionFailure('the embedded database could not be opened', error);
    }
  }
}

/** `opening`, or 57014 once `limit`'s deadline passes or its signal aborts first: a reopen counts against the time of the calls waiting for it. */
function beforeDeadline<T>(opening: Promise<T>, limit: WorkerRequestLimit<Turn>): Promise<T> {
  const { signal } = limit;
  return new Promise<T>((resolve, reject) => {
    const expired = () => reject(statementCanceled('statement timeout'));
    const aborted = () => reject(statementCanceled('user request'));
    const timer = setTimeout(expired, Math.min(Math.max(limit.deadline - Date.now(), 0), MAX_TIMER_MS));
    if (signal) onAbort(signal, aborted);
    void opening.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      if (signal) offAbort(signal, aborted);
    });
  });
}

/** A statement's time limit in ms: the one given, when it is a positive number; else DEFAULT_STATEMENT_LIMIT_MS. */
function limitMs(timeoutMs: number | undefined): number {
  return timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : DEFAULT_STATEMENT_LIMIT_MS;
}

/** A clean close lets PGlite finish its files; the thread is terminated either way. */
async function retire(thread: PgliteThread): Promise<void> {
  await thread.request({ kind: 'close' }, { deadline: Date.now() + CLOSE_LIMIT_MS }).catch(() => undefined);
  await thread.terminate();
}

