import { offAbort, onAbort } from '../../core/plugin-api/index.js';
import { TEXT_OIDS } from '../postgres/postgres-types.js';
import { statementCanceled, transactionAborted, connectionFailure } from './pglite-errors.js';
import type { PgliteRows, PgliteSetup, SessionScope } from './pglite-messages.js';
import { CutOff, PgliteThread, type RequestLimit } from './pglite-thread.js';

/** A statement's time limit when its caller gives none: nothing may hold the single connection forever. */
export const DEFAULT_STATEMENT_LIMIT_MS = 30_000;
/** Opening (a cold start takes seconds), an init script, a snapshot: one that never ends must not hang startup. */
export const SETUP_LIMIT_MS = 300_000;
/** A clean close; past it the thread is terminated anyway. */
const CLOSE_LIMIT_MS = 10_000;
/** Single statements sent to the worker ahead of their turn, so that it never waits for this thread between them. */
const MAX_IN_FLIGHT = 4;

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
  /** Over it the statement fails with 57014; absent (or not a positive number): DEFAULT_STATEMENT_LIMIT_MS. */
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
}

interface Job {
  run(): Promise<void>;
  /** A single statement outside a transaction: it may be sent while others are under way. */
  ahead: boolean;
  /** The transaction it belongs to: it runs while that transaction holds the session. */
  owner: TransactionTicket | undefined;
}

/**
 * The main thread's side of a PGlite datasource: one worker thread at a time (pglite-thread.ts), fed in call
 * order: up to MAX_IN_FLIGHT single statements at once (the worker runs them one by one), anything else
 * alone. A transaction holds the session from BEGIN to its end: calls of others wait. A statement over its
 * limit ends its worker; the same database is then reopened in a new worker, where the calls queued behind it
 * run, and the statements sent behind it run again. A file-backed database loses only the
 * canceled statement and its open transaction; an in-memory one starts again from its snapshot.
 */
export class PgliteHost {
  private opening: Promise<PgliteThread> | undefined;
  private epochs = 0;
  private readonly queue: Job[] = [];
  private running = 0;
  /** A call that runs alone is under way. */
  private alone = false;
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

  /** The login the session runs as once restricted (`reopenAs`); undefined: the bootstrap superuser. */
  get sessionUser(): string | undefined {
    return this.user;
  }

  /** True once `close` was called: calls are refused from then on. */
  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Opens the first worker; rejects (08006, the cause attached) when PGlite cannot open the database. */
  start(): Promise<void> {
    return this.enqueue(async () => {
      await this.current();
    });
  }

  /** One statement with `$n` parameters. */
  query(sql: string, params: unknown[], options: StatementOptions = {}): Promise<PgliteRows> {
    const { maxRows, maxBytes, scope } = options;
    const command = {
      kind: 'query' as const, sql, params,
      ...(maxRows === undefined ? {} : { maxRows }), ...(maxBytes === undefined ? {} : { maxBytes }), ...(scope === undefined ? {} : { scope }),
    };
    return this.onThread(options, (thread) => thread.request(command, limitOf(options)), options.transaction === undefined);
  }

  /** A script of any number of statements, without parameters. */
  exec(sql: string, options: StatementOptions = {}): Promise<void> {
    return this.onThread(options, async (thread) => {
      await thread.request({ kind: 'exec', sql }, limitOf(options));
    });
  }

  /**
   * Runs BEGIN, as the session's login (set back from a caller's scope); resolves with the ticket the
   * transaction's statements must give. The session is held until `end(ticket)`.
   */
  begin(options: StatementOptions = {}): Promise<TransactionTicket> {
    return this.onThread(options, async (thread) => {
      await thread.request({ kind: 'query', sql: 'begin', params: [] }, limitOf(options));
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
    return this.onThread({}, async (thread) => {
      this.snapshot = await thread.request({ kind: 'dump' }, { timeoutMs: SETUP_LIMIT_MS });
    });
  }

  /**
   * Ends the worker and opens the database in a new one whose session runs as `user` (undefined: the
   * superuser); every later reopen does likewise. In memory, the new worker starts from the present state,
   * which becomes the snapshot. Rejects when the database cannot be opened so: later calls then fail too
   * (503), never falling back to the superuser.
   */
  reopenAs(user: string | undefined): Promise<void> {
    return this.onThread({}, async (thread) => {
      if (this.dataDir === undefined) this.snapshot = await thread.request({ kind: 'dump' }, { timeoutMs: SETUP_LIMIT_MS });
      await retire(thread);
      this.user = user;
      await this.open();
    });
  }

  /** Closes after the calls already queued; later calls fail as on a closed PGlite. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= this.enqueue(async () => {
      const opening = this.opening;
      this.opening = undefined;
      const thread = await opening?.catch(() => undefined);
      if (thread) await retire(thread);
    }, undefined, true);
    return this.closing;
  }

  /**
   * Runs `work` on the current worker, in turn. A worker that its statement ended (over its limit, aborted,
   * crashed) is replaced at once, before the next call runs.
   */
  private onThread<T>(options: StatementOptions, work: (thread: PgliteThread) => Promise<T>, ahead = false): Promise<T> {
    const { transaction } = options;
    return this.enqueue(async () => {
      const thread = await this.current();
      if (transaction !== undefined && transaction.epoch !== thread.epoch) throw transactionAborted();
      try {
        return await work(thread);
      } catch (error) {
        // sent behind a statement that ended the worker: it never ran, so it runs on the next one
        if (!(error instanceof CutOff)) throw error;
        return await work(await this.current());
      } finally {
        if (thread.stopped && thread.epoch === this.epochs && this.closing === undefined) this.open(thread.terminate());
      }
    }, options.signal, false, { ahead, owner: transaction });
  }

  /** FIFO of calls; a call whose signal aborts while it waits leaves the queue at once. */
  private enqueue<T>(job: () => Promise<T>, signal?: AbortSignal, last = false, kind: Pick<Job, 'ahead' | 'owner'> = { ahead: false, owner: undefined }): Promise<T> {
    if (this.closing !== undefined && !last) return Promise.reject(new Error('PGlite is closed'));
    if (signal?.aborted) return Promise.reject(statementCanceled('user request'));
    return new Promise<T>((resolve, reject) => {
      const unqueue = () => {
        const at = this.queue.indexOf(item);
        if (at < 0) return;
        this.queue.splice(at, 1);
        reject(statementCanceled('user request'));
      };
      const item: Job = {
        ...kind,
        run: async () => {
          if (signal) offAbort(signal, unqueue);
          await job().then(resolve, reject);
        },
      };
      if (signal) onAbort(signal, unqueue);
      this.queue.push(item);
      this.pump();
    });
  }

  /** Starts what may start: the oldest call allowed while a transaction holds the session, alone or ahead. */
  private pump(): void {
    while (!this.alone) {
      const at = this.holder === undefined ? 0 : this.queue.findIndex((job) => job.owner === this.holder);
      const next = this.queue[at];
      if (next === undefined) return;
      // a transaction's own calls are never sent ahead: while one holds the session, everything runs alone
      const { ahead } = next;
      if (ahead ? this.running >= MAX_IN_FLIGHT : this.running > 0) return;
      this.queue.splice(at, 1);
      this.running += 1;
      this.alone = !ahead;
      void next.run().finally(() => {
        this.running -= 1;
        if (!ahead) this.alone = false;
        this.pump();
      });
    }
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
    // a failed reopen is reported to the next call
    opening.catch(() => undefined);
    this.opening = opening;
    return opening;
  }

  private async spawn(epoch: number): Promise<PgliteThread> {
    const thread = new PgliteThread(epoch, `pglite ${this.name}`);
    const setup: PgliteSetup = {
      textOids: TEXT_OIDS,
      ...(this.dataDir === undefined ? {} : { dataDir: this.dataDir }),
      ...(this.snapshot === undefined ? {} : { snapshot: this.snapshot }),
      ...(this.user === undefined ? {} : { sessionUser: this.user }),
    };
    try {
      await thread.request({ kind: 'open', setup }, { timeoutMs: SETUP_LIMIT_MS });
      return thread;
    } catch (error) {
      await thread.terminate();
      throw connectionFailure('the embedded database could not be opened', error);
    }
  }
}

function limitOf(options: StatementOptions): RequestLimit {
  const { timeoutMs } = options;
  return {
    timeoutMs: timeoutMs !== undefined && Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : DEFAULT_STATEMENT_LIMIT_MS,
    signal: options.signal,
  };
}

/** A clean close lets PGlite finish its files; the thread is terminated either way. */
async function retire(thread: PgliteThread): Promise<void> {
  await thread.request({ kind: 'close' }, { timeoutMs: CLOSE_LIMIT_MS }).catch(() => undefined);
  await thread.terminate();
}
