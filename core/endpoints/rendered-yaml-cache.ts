import { LruCache } from '../caching/lru-cache.js';
import { parseBoundedYaml, type BoundedYamlResult } from './bounded-yaml.js';

/** Requests of the same shape render the same text (values are placeholders), so most renders hit. */
const DEFAULT_CAPACITY = 500;
/** Texts above this size (long loops over request arrays) are parsed every time rather than kept. */
const MAX_CACHED_TEXT_LENGTH = 64 * 1024;

/**
 * Parses rendered definition bodies, once per distinct text. The documents are deep-frozen and shared by
 * every render of that text: consumers read them and build new values, never mutate them.
 */
export class RenderedYamlCache {
  private readonly parsed: LruCache<string, BoundedYamlResult>;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.parsed = new LruCache(capacity);
  }

  parse(text: string): BoundedYamlResult {
    const cached = this.parsed.get(text);
    if (cached) return cached;
    const result = parseBoundedYaml(text);
    if (result.ok) deepFreeze(result.value);
    if (text.length <= MAX_CACHED_TEXT_LENGTH) this.parsed.set(text, result);
    return result;
  }
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
