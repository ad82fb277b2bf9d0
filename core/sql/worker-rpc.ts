import { Worker } from 'node:worker_threads';
import { offAbort, onAbort } from './abort-listeners.js';
import type { WorkerReply, WorkerRequest, WireError } from './worker-rpc-messages.js';

export type { WireError } from './worker-rpc-messages.js';

/** How long a request may run, what ends it early, and what its owner tags it with. */
export interface WorkerRequestLimit<Tag> {
  /** When its time is up (`Date.now()` ms), counted from when its caller's call was accepted, not from its turn. */
  deadline: number;
  /** Aborted: the request is canceled like one over its time (after the RPC's `abortGraceMs`, once running). */
  signal?: AbortSignal | undefined;
  /** The owner's own mark (whose turn it is), handed back by `running` and `behind`. */
  tag?: Tag | undefined;
}

/** The request the worker is running: its tag, and since when (`Date.now()` when its turn came). */
export interface RunningRequest<Tag> {
  readonly tag: Tag | undefined;
  readonly since: number;
}

/** The errors a request fails with, in its owner's words (each speaks SQLSTATE through its own error type). */
export interface WorkerRpcErrors {
  /** Over its deadline, or its signal aborted: 57014. */
  canceled(reason: 'statement timeout' | 'user request'): Error;
  /** The worker is gone (ended, crashed, terminated). */
  stopped(): Error;
  /** The worker thread raised an error it did not answer with. */
  failed(cause: unknown): Error;
  /** Sent behind the one whose end ended the worker: it never ran, so its owner may send it again. */
  cutOff(): Error;
  /** The error the worker answered with. */
  fromWire(error: WireError): Error;
  /** The command could not be sent (a value structured clone cannot carry). */
  unsendable(cause: unknown): Error;
}

/** What a WorkerRpc runs, what it is called, and how its requests fail and end. */
export interface WorkerRpcOptions {
  /** The module the worker loads; it exports `perform(request)` (worker-rpc-serve.ts). */
  module: URL;
  /** Names the thread (`--inspect`, heap snapshots). */
  name: string;
  errors: WorkerRpcErrors;
  /** How long a running request whose signal aborted may still finish before the worker is ended; 0: at once. */
  abortGraceMs?: number;
  /** Called when a request is sent behind others, and when a request's turn comes. */
  onTurn?: () => void;
}

/** setTimeout fires at once past this. */
const MAX_TIMER_MS = 2_147_483_647;
/**
 * A request whose deadline passed before its turn: the worker answers 57014 without running it, and this long
 * is left for that answer to arrive before the worker is ended as for a request over its limit.
 */
const EXPIRED_GRACE_MS = 50;

/** A request sent and not answered yet. */
class Pending<Tag> {
  private timer: NodeJS.Timeout | undefined;
  private aborted = false;
  private running = false;
  since = 0;

  constructor(
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
    readonly limit: WorkerRequestLimit<Tag>,
    private readonly rpc: { errors: WorkerRpcErrors; abortGraceMs: number; end: (error: Error) => void },
  ) {
    if (limit.signal) onAbort(limit.signal, this.abandoned);
    // waiting behind others past its deadline, it answers 57014 then; the worker skips it when it gets there
    this.timer = setTimeout(() => this.reject(rpc.errors.canceled('statement timeout')), timerMs(limit.deadline - Date.now()));
  }

  /** Its turn came: it may run until its deadline, and an abort from before gets its grace from now. */
  started(): void {
    clearTimeout(this.timer);
    this.running = true;
    this.since = Date.now();
    if (this.aborted) this.graceThenEnd();
    else this.timer = setTimeout(() => this.rpc.end(this.rpc.errors.canceled('statement timeout')), timerMs(Math.max(this.limit.deadline - this.since, EXPIRED_GRACE_MS)));
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

  /** The worker ends, and the request fails as canceled, only when it still runs after the grace. */
  private graceThenEnd(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.rpc.end(this.rpc.errors.canceled('user request')), this.rpc.abortGraceMs);
  }
}

/**
 * The main thread's side of one worker thread (its side: worker-rpc-serve.ts), shared by the PGlite adapter
 * and the SQL door's catalog mirrors. Requests carry an id; the worker runs them one at a time in the order
 * sent, so several may be on their way and the worker never waits for the main thread between them. The one
 * running (the oldest unanswered) is bounded: past its deadline, or still running `abortGraceMs` after its
 * signal aborted, it ends the thread, the only way to stop a statement PGlite runs synchronously to its end.
 * The requests behind it fail as cut off (`errors.cutOff`): they never ran, and so when the worker crashes, or
 * exits after answering with a WASM trap. A stopped
 * thread answers nothing more: its owner opens another. The thread keeps the process alive only while a
 * request is under way, so an owner nobody closes does not hold the process at exit.
 */
export class WorkerRpc<Commands extends { kind: string }, Answers extends Record<Commands['kind'], unknown>, Tag = never> {
  private readonly worker: Worker;
  /** In the order sent: the first is the one running. */
  private readonly pending = new Map<number, Pending<Tag>>();
  private nextId = 1;
  private ended: Promise<void> | undefined;
  private readonly errors: WorkerRpcErrors;
  private readonly abortGraceMs: number;
  private readonly onTurn: () => void;

  constructor(options: WorkerRpcOptions) {
    this.errors = options.errors;
    this.abortGraceMs = options.abortGraceMs ?? 0;
    this.onTurn = options.onTurn ?? (() => undefined);
    this.worker = new Worker(new URL('./worker-rpc-serve.js', import.meta.url), { name: options.name, workerData: { module: options.module.href } });
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => this.settle(reply));
    // a crash: the request running fails with it, the ones sent behind it never ran
    this.worker.on('error', (error) => this.stop(this.errors.failed(error), this.pending.keys().next().value));
    this.worker.on('exit', () => this.stop(this.errors.stopped(), this.pending.keys().next().value));
  }

  /** True once the thread ended: over a limit, aborted, crashed or terminated. */
  get stopped(): boolean {
    return this.ended !== undefined;
  }

  /** The request running now, if any. */
  get running(): RunningRequest<Tag> | undefined {
    const first = this.pending.values().next().value;
    return first === undefined ? undefined : { tag: first.limit.tag, since: first.since };
  }

  /** The tags of the requests sent behind the one running. */
  *behind(): Iterable<Tag | undefined> {
    let first = true;
    for (const pending of this.pending.values()) {
      if (!first) yield pending.limit.tag;
      first = false;
    }
  }

  /** Sends one command; past its deadline (or when its signal aborts) it fails with 57014 and the thread ends. */
  request<K extends Commands['kind']>(command: Commands & { kind: K }, limit: WorkerRequestLimit<Tag>): Promise<Answers[K]> {
    if (this.stopped) return Promise.reject(this.errors.stopped());
    if (limit.signal?.aborted) return Promise.reject(this.errors.canceled('user request'));
    const id = this.nextId++;
    return new Promise<Answers[K]>((resolve, reject) => {
      const entry = new Pending<Tag>(resolve as (value: unknown) => void, reject, limit, {
        errors: this.errors,
        abortGraceMs: this.abortGraceMs,
        end: (error) => this.stop(error, id),
      });
      this.pending.set(id, entry);
      if (this.pending.size === 1) this.turn(entry);
      this.worker.ref();
      try {
        this.worker.postMessage({ id, deadline: limit.deadline, command } satisfies WorkerRequest<Commands>);
        if (this.pending.size > 1) this.onTurn();
      } catch (error) {
        this.pending.delete(id);
        entry.answer(undefined, this.errors.unsendable(error));
        this.idleCheck();
      }
    });
  }

  /**
   * Ends the thread for another request's turn: the one running fails with `error`; the ones behind it as
   * cut off before they ran.
   */
  endRunning(error: Error): void {
    const running = this.pending.keys().next().value;
    if (running !== undefined) this.stop(error, running);
  }

  /**
   * Ends the thread; resolves once its memory is released (a PGlite instance holds hundreds of MB, and a
   * file-backed one must be gone before its folder is opened again). Pending requests fail.
   */
  terminate(): Promise<void> {
    this.stop(this.errors.stopped());
    return this.ended ?? Promise.resolve();
  }

  private settle(reply: WorkerReply): void {
    // the worker exits after this reply (a WASM trap): nothing more is sent to it
    if (reply.ending === true) this.end();
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    const next = this.pending.values().next().value;
    if (next !== undefined && !this.stopped) this.turn(next);
    this.idleCheck();
    if ('error' in reply) pending.answer(undefined, this.errors.fromWire(reply.error));
    else pending.answer(reply.value);
    // the worker exits without running the ones sent behind it
    if (reply.ending === true) this.stop(this.errors.cutOff());
  }

  private turn(entry: Pending<Tag>): void {
    entry.started();
    this.onTurn();
  }

  private idleCheck(): void {
    if (this.pending.size === 0 && !this.stopped) this.worker.unref();
  }

  private end(): void {
    if (this.ended !== undefined) return;
    // held until gone: a reopen waits for it, and nothing else may keep the process alive meanwhile
    this.worker.ref();
    this.ended = this.worker.terminate().then(() => undefined, () => undefined);
  }

  /**
   * Ends the thread once. Request `culprit` fails with `error`; the one running, when it is not the culprit,
   * as stopped by the worker's end; the ones behind it as cut off. Without a culprit all fail with `error`.
   */
  private stop(error: Error, culprit?: number): void {
    this.end();
    const running = this.pending.keys().next().value;
    for (const [id, pending] of [...this.pending]) {
      pending.done();
      pending.reject(culprit === undefined || id === culprit ? error : id === running ? this.errors.stopped() : this.errors.cutOff());
    }
    this.pending.clear();
  }
}

function timerMs(ms: number): number {
  return Math.min(Math.max(ms, 0), MAX_TIMER_MS);
}
