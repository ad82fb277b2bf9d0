/**
 * The memory bound of a catalog mirror's PGlite (worker thread side). PGlite gives no option for it: its
 * WASM memory starts at 128 MiB and may grow to 2 GiB, and a statement building a large value
 * (`repeat('x', 67108864)`, a `string_agg` over a cross join) would grow it that far. So, once the mirror is
 * open, the free rest of its first 128 MiB is taken as one allocation that is never touched (it costs
 * address space, no resident memory), and the memory may grow only STATEMENT_MEMORY_BYTES past that: an
 * allocation beyond fails in PostgreSQL's allocator, which ends the statement with 53200 "out of memory"
 * and leaves the instance sound, so no thread has to be rebuilt (a second of CPU and 100 MB each).
 */
import type { PGlite } from '@electric-sql/pglite';

/** How much WASM memory the statements of a mirror may use beyond what opening it touched. */
export const STATEMENT_MEMORY_BYTES = 32 * 1024 * 1024;

const WASM_PAGE = 65_536;

/** The members of PGlite's Emscripten module used here (PGlite keeps it protected and untyped for them). */
interface EmscriptenModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  /** Addresses of PostgreSQL's `volatile sig_atomic_t` (int32) interrupt flags, exported for extensions. */
  _QueryCancelPending: number;
  _InterruptPending: number;
}

/** How large the memory may grow; until `boundHeap`, as large as PGlite allows. */
let ceiling = Number.POSITIVE_INFINITY;

/** `WebAssembly.Memory`, which the project's TypeScript libraries (no DOM) do not declare. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(delta: number): number;
}
const memory = (globalThis as unknown as { WebAssembly: { Memory: { prototype: WasmMemory } } }).WebAssembly.Memory.prototype;

// This worker's own global (worker threads share none): PGlite's memory is the only one it grows.
const grow = memory.grow;
memory.grow = function bounded(this: WasmMemory, delta: number): number {
  // Emscripten's resize_heap catches this and reports the allocation as failed
  if (this.buffer.byteLength + delta * WASM_PAGE > ceiling) throw new RangeError('the catalog mirror\'s memory bound');
  return grow.call(this, delta);
};

function moduleOf(db: PGlite): EmscriptenModule {
  const mod = (db as unknown as { mod?: EmscriptenModule }).mod;
  if (mod === undefined) throw new Error('PGlite is not open');
  return mod;
}

/** The size of PGlite's WASM memory. */
export function heapBytes(db: PGlite): number {
  return moduleOf(db).HEAPU8.byteLength;
}

/**
 * Bounds the memory of `db`, once it is open: the free memory it has is reserved untouched, and it may grow
 * by `STATEMENT_MEMORY_BYTES`.
 */
export function boundHeap(db: PGlite): void {
  const mod = moduleOf(db);
  ceiling = mod.HEAPU8.byteLength;
  // the largest block the allocator can give without growing the memory (a failed malloc returns 0)
  let fits = 0;
  let fails = ceiling;
  while (fails - fits > WASM_PAGE) {
    const size = Math.floor((fits + fails) / 2);
    const pointer = mod._malloc(size);
    if (pointer === 0) {
      fails = size;
    } else {
      mod._free(pointer);
      fits = size;
    }
  }
  if (fits > 0) mod._malloc(fits);
  ceiling = mod.HEAPU8.byteLength + STATEMENT_MEMORY_BYTES;
}

/**
 * Asks PostgreSQL to cancel the statement running in `db`, as a CancelRequest would: it stops at its next
 * interrupt check with 57014. Only callable from PGlite's own callbacks while the statement runs (the
 * output it streams), since PGlite runs a statement synchronously.
 */
export function cancelRunning(db: PGlite): void {
  const mod = moduleOf(db);
  const flags = new Int32Array(mod.HEAPU8.buffer);
  flags[mod._QueryCancelPending >> 2] = 1;
  flags[mod._InterruptPending >> 2] = 1;
}
