import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS with an ESM-style declaration: at run time the default import is the function.
const canonicalize = canonicalizeModule as unknown as (value: unknown) => string | undefined;

/** Keys JavaScript orders before all others in an object, whatever the insertion order. */
const ARRAY_INDEX_KEY = /^(0|[1-9][0-9]*)$/;

/** Lower-case hex SHA-256 of the bytes, as `sha256sum` prints it. */
export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * RFC 8785 (JCS) canonical JSON: keys sorted by UTF-16 code units, no whitespace, ECMAScript number and
 * string forms. The `canonicalize` library is the reference; it builds the text by string concatenation,
 * which costs about half a second per 5 MB on the startup path. JSON.stringify over key-sorted copies gives
 * the same bytes (JCS specifies exactly its string and number forms) unless an object has array-index
 * keys, which JavaScript always puts first: then the library writes it.
 */
export function canonicalJson(value: unknown): string {
  let indexKeys = false;
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'number' && !Number.isFinite(item)) throw new TypeError(`${item} has no JSON form`);
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const keys = Object.keys(item);
    if (isSorted(keys)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of keys.sort()) {
      if (ARRAY_INDEX_KEY.test(key)) indexKeys = true;
      sorted[key] = (item as Record<string, unknown>)[key];
    }
    return sorted;
  }) as string | undefined;
  const canonical = indexKeys ? canonicalize(value) : text;
  if (canonical === undefined) throw new TypeError('the value has no JSON form');
  return canonical;
}

/** Objects whose keys already are in order are written as they are, without a sorted copy. */
function isSorted(keys: readonly string[]): boolean {
  for (let index = 1; index < keys.length; index++) if ((keys[index - 1] as string) > (keys[index] as string)) return false;
  return true;
}

/** `sha256:<hex>` of the canonical JSON of a value: equal for equal content, whatever its key order. */
export function contentDigest(value: unknown): string {
  return `sha256:${sha256Hex(canonicalJson(value))}`;
}
