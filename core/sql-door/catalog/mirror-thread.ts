import { Worker } from 'node:worker_threads';
import { CatalogQueryError } from './catalog-query-error.js';
import type { MirrorAnswers, MirrorCommand, MirrorReply } from './mirror-messages.js';

interface Pending {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** SQLSTATE query_canceled, as PostgreSQL ends a statement over statement_timeout. */
const QUERY_CANCELED = '57014';
/** SQLSTATE connection_failure: the worker is gone. */
const CONNECTION_FAILURE = '08006';

/**
 * One worker thread holding one PGlite instance (mirror-worker.ts), fed one request at a time in call
 * order (its pool, mirror-pool.ts, sends it one statement at a time). A request over its time limit, or
 * cancelled, ends the thread, the only way to stop a statement PGlite runs to its end; a stopped thread
 * answers nothing more and its pool opens another. Like the PGlite adapter's thread,
 * which the core cannot reach (adapters sit behind the plugin API, and their datasources answer in logical
 * JSON values, not the PostgreSQL text and type OIDs the wire protocol needs).
 */
export class MirrorThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private tail: Promise<unknown> = Promise.resolve();
  private ended: Promise<void> | undefined;
  private queued = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** @param idleMs the thread ends once this long without a request (a mirror holds hundreds of MB); absent: never */
  constructor(name: string, private readonly idleMs?: number) {
    this.worker = new Worker(new URL('./mirror-worker.js', import.meta.url), { name });
    // an idle mirror does not keep the process alive
    this.worker.unref();
    this.worker.on('message', (reply: MirrorReply) => this.settle(reply));
    this.worker.on('error', (error) => this.stop(new CatalogQueryError(CONNECTION_FAILURE, 'the catalog mirror failed', { cause: error })));
    this.worker.on('exit', () => this.stop(stopped()));
  }

  /** True once the thread ended: over a limit, crashed or terminated. */
  get stopped(): boolean {
    return this.ended !== undefined;
  }

  /**
   * Sends one command after those before it; past `timeoutMs`, or once `signal` aborts, it fails with 57014
   * and the thread ends.
   */
  request<K extends MirrorCommand['kind']>(command: MirrorCommand & { kind: K }, timeoutMs: number, signal?: AbortSignal): Promise<MirrorAnswers[K]> {
    clearTimeout(this.idleTimer);
    this.queued++;
    const turn = this.tail.then(() => this.send<K>(command, timeoutMs, signal));
    this.tail = turn.catch(() => undefined).then(() => this.idle());
    return turn;
  }

  /** Ends the thread; resolves once its memory is released. Pending requests fail. */
  terminate(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.stop(stopped());
    return this.ended ?? Promise.resolve();
  }

  private idle(): void {
    if (--this.queued > 0 || this.idleMs === undefined || this.stopped) return;
    this.idleTimer = setTimeout(() => void this.terminate(), this.idleMs);
    this.idleTimer.unref();
  }

  private send<K extends MirrorCommand['kind']>(command: MirrorCommand & { kind: K }, timeoutMs: number, signal: AbortSignal | undefined): Promise<MirrorAnswers[K]> {
    if (this.stopped) return Promise.reject(stopped());
    if (signal?.aborted) return Promise.reject(new CatalogQueryError(QUERY_CANCELED, 'canceling statement due to user request'));
    const id = this.nextId++;
    return new Promise<MirrorAnswers[K]>((resolve, reject) => {
      const timer = setTimeout(() => this.stop(new CatalogQueryError(QUERY_CANCELED, 'canceling statement due to statement timeout'), id), timeoutMs);
      const cancel = () => this.stop(new CatalogQueryError(QUERY_CANCELED, 'canceling statement due to user request'), id);
      signal?.addEventListener('abort', cancel, { once: true });
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', cancel);
        this.pending.delete(id);
        if (this.pending.size === 0 && !this.stopped) this.worker.unref();
      };
      this.pending.set(id, {
        resolve: (value) => { done(); resolve(value as MirrorAnswers[K]); },
        reject: (error) => { done(); reject(error); },
      });
      this.worker.ref();
      try {
        this.worker.postMessage({ ...command, id });
      } catch (error) {
        // a parameter structured clone cannot carry
        this.pending.get(id)?.reject(new CatalogQueryError('22023', 'a parameter of the statement cannot be sent to the catalog mirror', { cause: error }));
      }
    });
  }

  private settle(reply: MirrorReply): void {
    // the worker exits after this reply: nothing more is sent to it
    if (reply.ending === true) this.ended ??= this.worker.terminate().then(() => undefined, () => undefined);
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    if ('value' in reply) {
      pending.resolve(reply.value);
      return;
    }
    const { code, detail, hint, position } = reply.error.fields;
    pending.reject(new CatalogQueryError(code ?? 'XX000', reply.error.message, {
      ...(detail === undefined ? {} : { detail }),
      ...(hint === undefined ? {} : { hint }),
      ...(position === undefined ? {} : { position }),
    }));
  }

  /** Ends the thread once; request `culprit` fails with `error`, the others as cut off. */
  private stop(error: Error, culprit?: number): void {
    if (this.ended === undefined) {
      this.worker.ref();
      this.ended = this.worker.terminate().then(() => undefined, () => undefined);
    }
    for (const [id, pending] of [...this.pending]) pending.reject(id === culprit || culprit === undefined ? error : stopped());
  }
}

function stopped(): CatalogQueryError {
  return new CatalogQueryError(CONNECTION_FAILURE, 'the catalog mirror stopped');
}
