import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LruCache, LruCaches } from '../../../core/caching/lru-cache.js';

test('the cache keeps at most its capacity and forgets the least recently used entry', () => {
  const cache = new LruCache<string, number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.is(cache.get('a'), 1);
  cache.set('c', 3);
  assert.is(cache.size, 2);
  assert.is(cache.get('b'), undefined);
  assert.equal([cache.get('a'), cache.get('c')], [1, 3]);
});

test('an entry pushed out is handed to onEvict, so what it holds can be released', () => {
  const evicted: [string, number][] = [];
  const cache = new LruCache<string, number>(2, (key, value) => evicted.push([key, value]));
  cache.set('a', 1);
  cache.set('b', 2);
  cache.get('a');
  cache.set('c', 3);
  cache.set('a', 4);
  assert.equal(evicted, [['b', 2]]);
});

test('a hit on the most recent entry keeps the order that the next eviction follows', () => {
  const cache = new LruCache<string, number>(2);
  cache.set('a', 1);
  cache.set('b', 2);
  assert.is(cache.get('b'), 2); // already the newest
  assert.is(cache.get('a'), 1); // now a is the newest, b the oldest
  assert.is(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal([cache.get('b'), cache.get('a'), cache.get('c')], [undefined, 1, 3]);
  cache.set('d', 4); // c was used last, a before it
  assert.equal([cache.get('a'), cache.get('c'), cache.get('d')], [undefined, 3, 4]);
});

test('LruCaches: one cache per owner, kept for the owner, each of the given capacity', () => {
  const caches = new LruCaches<object, string, number>(1);
  const [first, second] = [{}, {}];
  caches.of(first).set('a', 1);
  assert.is(caches.of(first), caches.of(first));
  assert.is(caches.of(first).get('a'), 1);
  assert.is(caches.of(second).get('a'), undefined);
  caches.of(first).set('b', 2);
  assert.equal([caches.of(first).get('a'), caches.of(first).get('b')], [undefined, 2]);
});

test.run();
