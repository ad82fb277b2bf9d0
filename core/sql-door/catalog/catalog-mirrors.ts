import { LruCache } from '../../caching/lru-cache.js';
import type { CatalogCaller } from './catalog-types.js';
import { mirrorDdl } from './mirror-ddl.js';
import { MirrorThread } from './mirror-thread.js';

/** Opening PGlite (a new database runs initdb: seconds, more under load) and creating the shells. */
const SETUP_LIMIT_MS = 120_000;

/**
 * The catalog mirrors of the callers seen lately, one per VDB version and grant set: an in-memory PGlite in
 * its own worker thread holding the caller's shells and nothing else. Each costs about 170 MB, so only the
 * `capacity` most recently used are kept, and none longer than `idleMs` unused; the others' threads end
 * and are built again when needed (about 1 s: each opens from one snapshot of a new
 * database, made once per process).
 */
export class CatalogMirrors {
  private readonly mirrors: LruCache<string, Promise<MirrorThread>>;
  private readonly threads = new Set<MirrorThread>();
  private template: Promise<Uint8Array> | undefined;
  private closed = false;

  /**
   * @param capacity mirrors kept at once
   * @param idleMs a mirror unused this long ends its thread (built again on next use)
   */
  constructor(capacity: number, private readonly idleMs: number) {
    this.mirrors = new LruCache(capacity, (_key, mirror) => void mirror.then((thread) => this.retire(thread), () => undefined));
  }

  /** Makes the snapshot now, so the first caller does not wait for initdb; a failure is retried on first use. */
  prepare(): void {
    this.snapshot().catch(() => undefined);
  }

  /** The caller's mirror, built on first use; concurrent first uses share one build (nothing awaits before it is cached). */
  mirrorFor(caller: CatalogCaller): Promise<MirrorThread> {
    if (this.closed) return Promise.reject(new Error('the catalog mirrors are closed'));
    const key = [caller.vdb, caller.version, caller.grantsKey].join('\u0000');
    const known = this.mirrors.get(key);
    if (known === undefined) return this.start(key, caller);
    // its build failed, or a statement over its limit ended it: the first to notice builds it again
    const again = (): Promise<MirrorThread> => {
      const current = this.mirrors.get(key);
      return current !== undefined && current !== known ? current : this.start(key, caller);
    };
    return known.then((thread) => {
      if (!thread.stopped) return thread;
      this.threads.delete(thread);
      return again();
    }, again);
  }

  private start(key: string, caller: CatalogCaller): Promise<MirrorThread> {
    const building = this.build(caller);
    this.mirrors.set(key, building);
    return building;
  }

  /** Ends every mirror's thread. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.threads].map((thread) => this.retire(thread)));
  }

  private async build(caller: CatalogCaller): Promise<MirrorThread> {
    const snapshot = await this.snapshot();
    if (this.closed) throw new Error('the catalog mirrors are closed');
    const thread = this.spawn(`catalog mirror ${caller.vdb}@${caller.version}`, this.idleMs);
    try {
      await thread.request({ kind: 'open', snapshot, ddl: mirrorDdl(caller) }, SETUP_LIMIT_MS);
    } catch (error) {
      await this.retire(thread);
      throw error;
    }
    return thread;
  }

  /** A new database's files, made once (initdb runs in a thread that ends after, giving its memory back). */
  private snapshot(): Promise<Uint8Array> {
    this.template ??= (async () => {
      const thread = this.spawn('catalog mirror template');
      try {
        await thread.request({ kind: 'open' }, SETUP_LIMIT_MS);
        return await thread.request({ kind: 'dump' }, SETUP_LIMIT_MS);
      } finally {
        await this.retire(thread);
      }
    })();
    // a failed template is tried again by the next build
    this.template.catch(() => { this.template = undefined; });
    return this.template;
  }

  private spawn(name: string, idleMs?: number): MirrorThread {
    const thread = new MirrorThread(name, idleMs);
    this.threads.add(thread);
    return thread;
  }

  private async retire(thread: MirrorThread): Promise<void> {
    this.threads.delete(thread);
    await thread.terminate();
  }
}
