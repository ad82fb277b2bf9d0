/** A bounded map that forgets the least recently used entry first (a Map keeps insertion order). */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** The most recently used key: a hit on it (a hot text asked for again) needs no reordering. */
  private newest: K | undefined;

  /** @param onEvict called with an entry pushed out by a newer one, to release what it holds */
  constructor(private readonly capacity: number, private readonly onEvict?: (key: K, value: V) => void) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined && key !== this.newest) {
      this.entries.delete(key);
      this.entries.set(key, value);
      this.newest = key;
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    if (this.entries.size <= this.capacity) return;
    const [oldestKey, oldest] = this.entries.entries().next().value as [K, V];
    this.entries.delete(oldestKey);
    this.onEvict?.(oldestKey, oldest);
  }
}

/** An LruCache per owner (a dialect, a grammar), made on its first use and gone with the owner. */
export class LruCaches<O extends object, K, V> {
  private readonly byOwner = new WeakMap<O, LruCache<K, V>>();

  constructor(private readonly capacity: number) {}

  of(owner: O): LruCache<K, V> {
    let cache = this.byOwner.get(owner);
    if (!cache) this.byOwner.set(owner, (cache = new LruCache(this.capacity)));
    return cache;
  }
}
