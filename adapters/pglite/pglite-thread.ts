import { Worker } from 'node:worker_threads';
import { offAbort, onAbort } from '../../core/plugin-api/index.js';
import { connectionFailure, errorFromWire, statementCanceled, workerStopped } from './pglite-errors.js';
import type { PgliteAnswers, PgliteCommand, PgliteReply } from './pglite-messages.js';

/** How long a request may run, and what ends it early. */
export interface RequestLimit {
  timeoutMs: number;
  /** Aborted: the request is canceled like one over its time. */
  signal?: AbortSignal | undefined;
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
 * A request sent behind others that the thread ended before its turn: it never ran, so its owner may send
 * it again to the next worker.
 */
export class CutOff extends Error {
  constructor() {
    super('the embedded database worker stopped before this request ran');
    this.name = 'CutOff';
  }
}

/** A request sent and not answered yet; the worker runs them in the order sent. */
class Pending {
  private timer: NodeJS.Timeout | undefined;
  private aborted = false;
  private running = false;

  constructor(
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
    private readonly limit: RequestLimit,
    private readonly end: (error: Error) => void,
  ) {
    if (limit.signal) onAbort(limit.signal, this.abandoned);
  }

  /** Its turn came: its time limit counts from now, and an abort from before gets its grace from now. */
  started(): void {
    this.running = true;
    if (this.aborted) this.graceThenEnd();
    else this.timer = setTimeout(() => this.end(statementCanceled('statement timeout')), Math.min(Math.max(this.limit.timeoutMs, 1), MAX_TIMER_MS));
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
 * between them. The one running (the oldest unanswered) is bounded: over its time limit, or still running
 * ABANDON_GRACE_MS after its signal aborted, it ends the thread: the only way to stop a statement PGlite runs
 * to its end. The requests behind it fail with CutOff. A stopped thread answers nothing more; its owner
 * (pglite-host.ts) opens another. The thread keeps the process alive only while a request is under way, so
 * a datasource nobody closes does not hold the process at exit.
 */
export class PgliteThread {
  private readonly worker: Worker;
  /** In the order sent: the first is the one running. */
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private ended: Promise<void> | undefined;

  /** Which opening of its datasource this is: a transaction runs on the thread it began on, or fails. */
  constructor(readonly epoch: number, name: string) {
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

  /** Sends one command; past `limit` (or when its signal aborts) it fails with 57014 and the thread ends. */
  request<K extends PgliteCommand['kind']>(command: PgliteCommand & { kind: K }, limit: RequestLimit): Promise<PgliteAnswers[K]> {
    if (this.stopped) return Promise.reject(workerStopped());
    if (limit.signal?.aborted) return Promise.reject(statementCanceled('user request'));
    const id = this.nextId++;
    return new Promise<PgliteAnswers[K]>((resolve, reject) => {
      const entry = new Pending(resolve as (value: unknown) => void, reject, limit, (error) => this.stop(error, id));
      this.pending.set(id, entry);
      if (this.pending.size === 1) entry.started();
      this.worker.ref();
      try {
        this.worker.postMessage({ ...command, id });
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
    next?.started();
    this.idleCheck();
    if ('error' in reply) pending.answer(undefined, errorFromWire(reply.error));
    else pending.answer(reply.value);
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
