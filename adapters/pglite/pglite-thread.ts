import { Worker } from 'node:worker_threads';
import { offAbort, onAbort } from '../../core/plugin-api/adapter-kit.js';
import { connectionFailure, errorFromWire, statementCanceled, workerStopped } from './pglite-errors.js';
import type { PgliteAnswers, PgliteCommand, PgliteReply } from './pglite-messages.js';

/** How long a request may run, what ends it early, and whose it is. */
export interface RequestLimit {
  /** When its time is up (`Date.now()` ms), counted from when its caller's call was accepted, not from its turn. */
  deadline: number;
  /** Aborted: the request is canceled like one over its time. */
  signal?: AbortSignal | undefined;
  /** Whose turn it takes (pglite-host.ts): a role set, or '' for the service's own calls. */
  lane?: string | undefined;
  /** A caller's read-only single statement: ended by `preempt`, it may simply run again. */
  preemptible?: boolean | undefined;
}

/** The request running on the worker: whose it is and since when. */
export interface Running {
  readonly lane: string;
  readonly preemptible: boolean;
  /** `Date.now()` when its turn came. */
  readonly since: number;
}

/** setTimeout fires at once past this. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * How long a statement whose request ended may still run before its worker is ended; one that ends within it
 * answers as it would have. Ending the worker reopens the database (seconds of CPU; an in-memory one loses
 * what was written since its snapshot), which a statement about to finish on its own does not deserve: a
 * client that hangs up mid-lookup would cost every other caller that much.
 */
export const ABANDON_GRACE_MS = 250;
/**
 * A request whose deadline passed before its turn: the worker answers 57014 without running it, and this long
 * is left for that answer to arrive before the worker is ended as for a statement over its limit.
 */
const EXPIRED_GRACE_MS = 50;

/**
 * A request the thread ended before it answered, at no fault of its own: sent behind others, it never ran;
 * or, `preempted`, it was a caller's read-only statement ended for another caller's turn. Either way its
 * owner may send it again to the next worker.
 */
export class CutOff extends Error {
  constructor(readonly preempted = false) {
    super(preempted ? 'the embedded database worker was ended for another caller\'s turn' : 'the embedded database worker stopped before this request ran');
    this.name = 'CutOff';
  }
}

/** A request sent and not answered yet; the worker runs them in the order sent. */
class Pending {
  private timer: NodeJS.Timeout | undefined;
  private aborted = false;
  private running = false;
  /** `Date.now()` when its turn came. */
  since = 0;

  constructor(
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
    readonly limit: RequestLimit,
    private readonly end: (error: Error) => void,
  ) {
    if (limit.signal) onAbort(limit.signal, this.abandoned);
    // waiting behind others past its deadline, it answers 57014 then; the worker skips it when it gets there
    this.timer = setTimeout(() => this.reject(statementCanceled('statement timeout')), Math.min(Math.max(limit.deadline - Date.now(), 0), MAX_TIMER_MS));
  }

  /** Its turn came: it may run until its deadline, and an abort from before gets its grace from now. */
  started(): void {
    clearTimeout(this.timer);
    this.running = true;
    this.since = Date.now();
    if (this.aborted) this.graceThenEnd();
    else this.timer = setTimeout(() => this.end(statementCanceled('statement timeout')), Math.min(Math.max(this.limit.deadline - this.since, EXPIRED_GRACE_MS), MAX_TIMER_MS));
  }

  /**
   * The worker's answer. One that came within the grace after an abort stands, as PostgreSQL answers a cancel
   * that arrives once the statement is done: a write it made is not reported as canceled.
   */
  answer(value: unknown, error?: unknown): void {
    this.done();
    if (error !== undefined) this.reject(error);
    else this.resolve(value);
  }

  done(): void {
    clearTimeout(this.timer);
    if (this.limit.signal) offAbort(this.limit.signal, this.abandoned);
  }

  private readonly abandoned = () => {
    this.aborted = true;
    if (this.running) this.graceThenEnd();
  };

  /** The worker ends, and the statement fails as canceled, only when it still runs after the grace. */
  private graceThenEnd(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.end(statementCanceled('user request')), ABANDON_GRACE_MS);
  }
}

/**
 * One worker thread holding one PGlite instance (pglite-worker.ts), which runs what it is sent in the order
 * sent, one at a time; several requests may be on their way, so the worker never waits for the main thread
 * between them. The one running (the oldest unanswered) is bounded: past its deadline, or still running
 * ABANDON_GRACE_MS after its signal aborted, it ends the thread: the only way to stop a statement PGlite runs
 * to its end. So does `preempt`, for another caller's turn. The requests behind it fail with CutOff; one
 * whose deadline passed before its turn is answered 57014 by the worker without running. A stopped thread
 * answers nothing more; its owner (pglite-host.ts) opens another. The thread keeps the process alive only
 * while a request is under way, so a datasource nobody closes does not hold the process at exit.
 */
export class PgliteThread {
  private readonly worker: Worker;
  /** In the order sent: the first is the one running. */
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private ended: Promise<void> | undefined;

  /**
   * @param epoch which opening of its datasource this is: a transaction runs on the thread it began on, or
   *   fails; a thread opened ahead of its use (pglite-host.ts) is given its epoch when it is taken
   * @param changed called when a request is sent, and when a request's turn comes on the worker
   */
  constructor(public epoch: number, name: string, private readonly changed: () => void = () => undefined) {
    this.worker = new Worker(new URL('./pglite-worker.js', import.meta.url), { name });
    this.worker.unref();
    this.worker.on('message', (reply: PgliteReply) => this.settle(reply));
    this.worker.on('error', (error) => this.stop(connectionFailure('the embedded database worker failed', error)));
    this.worker.on('exit', () => this.stop(workerStopped()));
  }

  /** True once the thread ended: over a limit, aborted, crashed or terminated. */
  get stopped(): boolean {
    return this.ended !== undefined;
  }

  /** The request running now, if any. */
  get running(): Running | undefined {
    const first = this.pending.values().next().value;
    if (first === undefined) return undefined;
    return { lane: first.limit.lane ?? '', preemptible: first.limit.preemptible === true, since: first.since };
  }

  /** The lanes of the requests sent behind the one running. */
  *behind(): Iterable<string> {
    let first = true;
    for (const pending of this.pending.values()) {
      if (!first) yield pending.limit.lane ?? '';
      first = false;
    }
  }

  /**
   * Ends the thread for another caller's turn: the request running fails with CutOff (preempted), to run
   * again later; the ones behind it as cut off before they ran.
   */
  preempt(): void {
    const running = this.pending.keys().next().value;
    if (running !== undefined) this.stop(new CutOff(true), running);
  }

  /** Sends one command; past its deadline (or when its signal aborts) it fails with 57014 and the thread ends. */
  request<K extends PgliteCommand['kind']>(command: PgliteCommand & { kind: K }, limit: RequestLimit): Promise<PgliteAnswers[K]> {
    if (this.stopped) return Promise.reject(workerStopped());
    if (limit.signal?.aborted) return Promise.reject(statementCanceled('user request'));
    const id = this.nextId++;
    return new Promise<PgliteAnswers[K]>((resolve, reject) => {
      const entry = new Pending(resolve as (value: unknown) => void, reject, limit, (error) => this.stop(error, id));
      this.pending.set(id, entry);
      if (this.pending.size === 1) this.turn(entry);
      this.worker.ref();
      try {
        this.worker.postMessage({ ...command, id, deadline: limit.deadline });
        if (this.pending.size > 1) this.changed();
      } catch (error) {
        // a bound value structured clone cannot carry: it never reached the worker
        this.pending.delete(id);
        entry.answer(undefined, error);
        this.idleCheck();
      }
    });
  }

  /**
   * Ends the thread; resolves once its memory is released (a PGlite instance holds hundreds of MB, and a
   * file-backed one must be gone before the folder is opened again). Pending requests fail.
   */
  terminate(): Promise<void> {
    this.stop(workerStopped());
    return this.ended ?? Promise.resolve();
  }

  private settle(reply: PgliteReply): void {
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    const next = this.pending.values().next().value;
    if (next !== undefined) this.turn(next);
    this.idleCheck();
    if ('error' in reply) pending.answer(undefined, errorFromWire(reply.error));
    else pending.answer(reply.value);
  }

  private turn(entry: Pending): void {
    entry.started();
    this.changed();
  }

  private idleCheck(): void {
    if (this.pending.size === 0 && !this.stopped) this.worker.unref();
  }

  /**
   * Ends the thread once. Request `culprit` fails with `error`; the one running, when it is not the culprit,
   * as cut off by the worker's end; the ones behind it with CutOff. Without a culprit (a crash, a close) all
   * fail with `error`.
   */
  private stop(error: Error, culprit?: number): void {
    if (this.ended === undefined) {
      // held until gone: a reopen waits for it, and nothing else may keep the process alive meanwhile
      this.worker.ref();
      this.ended = this.worker.terminate().then(() => undefined, () => undefined);
    }
    const running = this.pending.keys().next().value;
    for (const [id, pending] of [...this.pending]) {
      pending.done();
      pending.reject(culprit === undefined || id === culprit ? error : id === running ? workerStopped() : new CutOff());
    }
    this.pending.clear();
  }
}
