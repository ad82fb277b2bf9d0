import { QUERY_CANCELED } from '../../sql/statement-failure.js';
import { WorkerRpc, type WorkerRpcErrors } from '../../sql/worker-rpc.js';
import { CatalogQueryError } from './catalog-query-error.js';
import type { MirrorAnswers, MirrorCommand } from './mirror-messages.js';

/** SQLSTATE connection_failure: the worker is gone. */
const CONNECTION_FAILURE = '08006';

const errors: WorkerRpcErrors = {
  canceled: (reason) => new CatalogQueryError(QUERY_CANCELED, `canceling statement due to ${reason}`),
  stopped: mirrorStopped,
  failed: (cause) => new CatalogQueryError(CONNECTION_FAILURE, 'the catalog mirror failed', { cause }),
  // a mirror's pool sends a thread one statement at a time: nothing is ever behind another
  cutOff: mirrorStopped,
  fromWire: ({ message, fields: { code, detail, hint, position } }) => new CatalogQueryError(code === undefined ? 'XX000' : String(code), message, {
    ...(detail === undefined ? {} : { detail: String(detail) }),
    ...(hint === undefined ? {} : { hint: String(hint) }),
    ...(position === undefined ? {} : { position: String(position) }),
  }),
  unsendable: (cause) => new CatalogQueryError('22023', 'a parameter of the statement cannot be sent to the catalog mirror', { cause }),
};

/**
 * One worker thread holding one PGlite instance (mirror-worker.ts), reached through the WorkerRpc the
 * PGlite adapter uses too (the core cannot reach the adapter's datasource: adapters sit behind the plugin
 * API, and their datasources answer in logical JSON values, not the PostgreSQL text and type OIDs the wire
 * protocol needs). A request over its time limit, or cancelled, ends the thread; its pool opens another.
 */
export class MirrorThread {
  private readonly rpc: WorkerRpc<MirrorCommand, MirrorAnswers>;
  private underWay = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  /** @param idleMs the thread ends once this long without a request (a mirror holds hundreds of MB); absent: never */
  constructor(name: string, private readonly idleMs?: number) {
    this.rpc = new WorkerRpc({ module: new URL('./mirror-worker.js', import.meta.url), name, errors });
  }

  /** True once the thread ended: over a limit, crashed or terminated. */
  get stopped(): boolean {
    return this.rpc.stopped;
  }

  /** Sends one command; past `timeoutMs`, or once `signal` aborts, it fails with 57014 and the thread ends. */
  async request<K extends MirrorCommand['kind']>(command: MirrorCommand & { kind: K }, timeoutMs: number, signal?: AbortSignal): Promise<MirrorAnswers[K]> {
    clearTimeout(this.idleTimer);
    this.underWay++;
    try {
      return await this.rpc.request<K>(command, { deadline: Date.now() + timeoutMs, signal });
    } finally {
      if (--this.underWay === 0 && this.idleMs !== undefined && !this.stopped) {
        this.idleTimer = setTimeout(() => void this.terminate(), this.idleMs);
        this.idleTimer.unref();
      }
    }
  }

  /** Ends the thread; resolves once its memory is released. Pending requests fail. */
  terminate(): Promise<void> {
    clearTimeout(this.idleTimer);
    return this.rpc.terminate();
  }
}

/** The mirror's thread is gone, or its pool closed: 08006. */
export function mirrorStopped(): CatalogQueryError {
  return new CatalogQueryError(CONNECTION_FAILURE, 'the catalog mirror stopped');
}
