/** A bounded map that forgets the least recently used entry first (a Map keeps insertion order). */
export class LruCache<K, V> {
  private readonly entries = new Map<K, V>();
  /** The most recently used key: a hit on it (a hot text asked for again) needs no reordering. */
  private newest: K | undefined;

  constructor(private readonly capacity: number) {}

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
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }
}
