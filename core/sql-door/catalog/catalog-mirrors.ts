import { LruCache } from '../../caching/lru-cache.js';
import type { CatalogCaller } from './catalog-types.js';
import { mirrorDdl } from './mirror-ddl.js';
import { MirrorPool } from './mirror-pool.js';
import { MirrorThread } from './mirror-thread.js';

/** Opening PGlite (a new database runs initdb: seconds, more under load) and creating the shells. */
const SETUP_LIMIT_MS = 120_000;
/** A mirror's spare thread (opened while its first was busy) ends once unused this long. */
const SPARE_IDLE_MS = 60_000;

/**
 * The catalog mirrors of the callers seen lately, one per VDB version and grant set: an in-memory PGlite in
 * its own worker thread holding the caller's shells and nothing else, and more threads of the same while
 * statements wait (mirror-pool.ts). Each thread costs about 170 MB, so only the `capacity` most recently
 * used mirrors are kept, and no thread longer than `idleMs` unused (a spare one a minute); the others'
 * threads end and are built again when needed (about 1 s: each opens from one snapshot of a new
 * database, made once per process).
 */
export class CatalogMirrors {
  private readonly mirrors: LruCache<string, MirrorPool>;
  private readonly pools = new Set<MirrorPool>();
  private readonly threads = new Set<MirrorThread>();
  private template: Promise<Uint8Array> | undefined;
  private closed = false;

  /**
   * @param capacity mirrors kept at once
   * @param idleMs a mirror unused this long ends its thread (built again on next use)
   * @param threadsPerMirror threads one mirror may have while statements wait
   */
  constructor(capacity: number, private readonly idleMs: number, private readonly threadsPerMirror: number) {
    this.mirrors = new LruCache(capacity, (_key, pool) => void this.retirePool(pool));
  }

  /** Makes the snapshot now, so the first caller does not wait for initdb; a failure is retried on first use. */
  prepare(): void {
    this.snapshot().catch(() => undefined);
  }

  /** The caller's mirror; its threads open as its statements need them. */
  mirrorFor(caller: CatalogCaller): MirrorPool {
    if (this.closed) throw new Error('the catalog mirrors are closed');
    const key = [caller.vdb, caller.version, caller.grantsKey].join('\u0000');
    let pool = this.mirrors.get(key);
    if (pool === undefined) {
      pool = new MirrorPool((first) => this.build(caller, first ? this.idleMs : Math.min(this.idleMs, SPARE_IDLE_MS)), this.threadsPerMirror);
      this.pools.add(pool);
      this.mirrors.set(key, pool);
    }
    return pool;
  }

  /** Ends every mirror's threads. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...[...this.pools].map((pool) => this.retirePool(pool)), ...[...this.threads].map((thread) => this.retire(thread))]);
  }

  private async retirePool(pool: MirrorPool): Promise<void> {
    this.pools.delete(pool);
    await pool.close();
  }

  private async build(caller: CatalogCaller, idleMs: number): Promise<MirrorThread> {
    const snapshot = await this.snapshot();
    if (this.closed) throw new Error('the catalog mirrors are closed');
    const thread = this.spawn(`catalog mirror ${caller.vdb}@${caller.version}`, idleMs);
    try {
      await thread.request({ kind: 'open', snapshot, ddl: mirrorDdl(caller) }, SETUP_LIMIT_MS);
    } catch (error) {
      await this.retire(thread);
      throw error;
    }
    // its pool ends it from now on
    this.threads.delete(thread);
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
