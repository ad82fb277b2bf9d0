import { QUERY_CANCELED } from '../../sql/statement-failure.js';
import { CatalogQueryError } from './catalog-query-error.js';
import type { MirrorAnswers, MirrorCommand } from './mirror-messages.js';
import { mirrorStopped, type MirrorThread } from './mirror-thread.js';

/** How one statement on a mirror is bounded, and whose it is. */
export interface MirrorLimits {
  timeoutMs: number;
  /** The client's cancel (CancelRequest): a waiting statement leaves the queue, a running one's thread ends. */
  signal?: AbortSignal | undefined;
  /** Who asks (the caller's identity): a caller runs one statement at a time on a mirror, the others waiting in turn. */
  owner: string;
}

interface Job {
  command: MirrorCommand;
  limits: MirrorLimits;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  /** Takes the job out of the queue when its signal aborts. */
  unqueue?: () => void;
}

/**
 * The worker threads of one catalog mirror (same VDB version, same grants), each running one statement at a
 * time. While a statement runs, one more thread is kept ready (built from the snapshot, about 1 s, up to
 * `maxThreads`), and a statement that still finds every thread busy gets one built, so a slow statement
 * delays nobody else's; a caller's statements run one at a time, so one caller cannot take every thread. A statement over its time limit, or cancelled,
 * ends only its own thread: the others' statements go on, and the queue is served by the threads left or
 * by new ones.
 */
export class MirrorPool {
  private readonly idle: MirrorThread[] = [];
  private readonly busy = new Set<MirrorThread>();
  private building = 0;
  private readonly queue: Job[] = [];
  /** Owners with a statement running. */
  private readonly running = new Set<string>();
  private closed = false;

  /**
   * @param build opens a new thread of this mirror; `first` says it is the pool's only one (it is kept
   *   longer idle than the spares)
   */
  constructor(private readonly build: (first: boolean) => Promise<MirrorThread>, private readonly maxThreads: number) {}

  /** Runs `command` on a thread of the mirror, in turn. */
  run<K extends MirrorCommand['kind']>(command: MirrorCommand & { kind: K }, limits: MirrorLimits): Promise<MirrorAnswers[K]> {
    if (this.closed) return Promise.reject(mirrorStopped());
    const { signal } = limits;
    if (signal?.aborted) return Promise.reject(cancelled());
    return new Promise<MirrorAnswers[K]>((resolve, reject) => {
      const job: Job = { command, limits, resolve: resolve as (value: unknown) => void, reject };
      if (signal) {
        job.unqueue = () => {
          const at = this.queue.indexOf(job);
          if (at < 0) return;
          this.queue.splice(at, 1);
          reject(cancelled());
        };
        signal.addEventListener('abort', job.unqueue, { once: true });
      }
      this.queue.push(job);
      this.pump();
    });
  }

  /** Threads open (idle or running a statement). */
  get threads(): number {
    return this.idle.filter((thread) => !thread.stopped).length + this.busy.size;
  }

  /** Ends every thread; waiting statements fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(mirrorStopped());
    const threads = [...this.idle.splice(0), ...this.busy];
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  /** Starts what can start: the first waiting statement of each owner without one running, on an idle thread. */
  private pump(): void {
    if (this.closed) return;
    for (;;) {
      const at = this.queue.findIndex((job) => !this.running.has(job.limits.owner));
      if (at < 0) return;
      const thread = this.takeIdle();
      if (thread === undefined) return this.grow(new Set(this.queue.map((job) => job.limits.owner).filter((owner) => !this.running.has(owner))).size);
      const job = this.queue.splice(at, 1)[0] as Job;
      this.start(job, thread);
    }
  }

  /** An idle thread still alive (an idle one ends itself after a while). */
  private takeIdle(): MirrorThread | undefined {
    let thread = this.idle.pop();
    while (thread !== undefined && thread.stopped) thread = this.idle.pop();
    return thread;
  }

  /** Opens threads until `wanted` are being opened, within `maxThreads`. */
  private grow(wanted: number): void {
    while (this.building < wanted && this.busy.size + this.idle.length + this.building < this.maxThreads) {
      const first = this.busy.size + this.idle.length + this.building === 0;
      this.building++;
      this.build(first).then((thread) => {
        this.building--;
        if (this.closed) return void thread.terminate();
        this.idle.push(thread);
        this.pump();
      }, (error: unknown) => {
        this.building--;
        // the statement it was opened for fails with the reason; the next one tries again
        const job = this.queue.find((candidate) => !this.running.has(candidate.limits.owner));
        if (job !== undefined) this.settle(job, () => job.reject(error));
        this.pump();
      });
    }
  }

  private start(job: Job, thread: MirrorThread): void {
    const { owner, timeoutMs, signal } = job.limits;
    if (job.unqueue) signal?.removeEventListener('abort', job.unqueue);
    this.running.add(owner);
    this.busy.add(thread);
    this.keepSpare();
    thread.request(job.command, timeoutMs, signal).then(job.resolve, job.reject).finally(() => {
      this.running.delete(owner);
      this.busy.delete(thread);
      // a thread its statement ended (over its time limit, cancelled, a WASM trap) is not reused
      if (!thread.stopped && !this.closed) this.idle.push(thread);
      else this.keepSpare();
      this.pump();
    });
  }

  /** While the mirror is in use, one thread waits idle, so that the next caller's statement does not wait for one to open. */
  private keepSpare(): void {
    if (!this.closed && !this.idle.some((idle) => !idle.stopped)) this.grow(1);
  }

  private settle(job: Job, done: () => void): void {
    const at = this.queue.indexOf(job);
    if (at >= 0) this.queue.splice(at, 1);
    if (job.unqueue) job.limits.signal?.removeEventListener('abort', job.unqueue);
    done();
  }
}

function cancelled(): CatalogQueryError {
  return new CatalogQueryError(QUERY_CANCELED, 'canceling statement due to user request');
}
