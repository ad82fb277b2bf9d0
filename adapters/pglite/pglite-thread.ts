import { Worker } from 'node:worker_threads';
import { connectionFailure, errorFromWire, statementCanceled, workerStopped } from './pglite-errors.js';
import type { PgliteAnswers, PgliteCommand, PgliteReply } from './pglite-messages.js';

/** How long a request may run, and what ends it early. */
export interface RequestLimit {
  timeoutMs: number;
  /** Aborted: the request is canceled like one over its time. */
  signal?: AbortSignal | undefined;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** setTimeout fires at once past this. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * One worker thread holding one PGlite instance (pglite-worker.ts). A request over its time limit, or whose
 * signal aborts, ends the thread: the only way to stop a statement PGlite runs to its end. A stopped thread
 * answers nothing more; its owner (pglite-host.ts) opens another. The thread keeps the process alive only
 * while a request is under way, so a datasource nobody closes does not hold the process at exit.
 */
export class PgliteThread {
  private readonly worker: Worker;
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
      const timer = setTimeout(() => this.stop(statementCanceled('statement timeout'), id), Math.min(Math.max(limit.timeoutMs, 1), MAX_TIMER_MS));
      const onAbort = () => this.stop(statementCanceled('user request'), id);
      limit.signal?.addEventListener('abort', onAbort, { once: true });
      const done = () => {
        clearTimeout(timer);
        limit.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        if (this.pending.size === 0 && !this.stopped) this.worker.unref();
      };
      this.pending.set(id, {
        resolve: (value) => { done(); resolve(value as PgliteAnswers[K]); },
        reject: (error) => { done(); reject(error); },
      });
      this.worker.ref();
      try {
        this.worker.postMessage({ ...command, id });
      } catch (error) {
        // a bound value structured clone cannot carry
        this.pending.get(id)?.reject(error);
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
    if ('error' in reply) pending.reject(errorFromWire(reply.error));
    else pending.resolve(reply.value);
  }

  /** Ends the thread once; request `culprit` fails with `error`, the others (if any) as cut off. */
  private stop(error: Error, culprit?: number): void {
    if (this.ended === undefined) {
      // held until gone: a reopen waits for it, and nothing else may keep the process alive meanwhile
      this.worker.ref();
      this.ended = this.worker.terminate().then(() => undefined, () => undefined);
    }
    for (const [id, pending] of [...this.pending]) {
      pending.reject(id === culprit || culprit === undefined ? error : workerStopped());
    }
  }
}
