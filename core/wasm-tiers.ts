import { setFlagsFromString } from 'node:v8';

/**
 * Keeps the process's WebAssembly (libpg-query's parser, PGlite) on V8's baseline compiler, Liftoff
 * (docs/federation.md#memory). V8 otherwise optimizes a WebAssembly function once it has run a while; on
 * Node 24 (V8 13.6, whose optimizing compiler for WebAssembly is Turboshaft) optimizing the parser's largest
 * function, PostgreSQL's grammar (100 KB of WebAssembly), takes about 600 MB for two seconds, a peak no
 * memory bound of the service could allow for (Node 20's V8 took 8 MB for it). Both flags are needed (either
 * alone measured the same peak): with dynamic tiering V8 optimizes the functions that run hot; without it,
 * every function at once. V8 reads them when a function is due to be optimized, so they hold from the
 * moment they are set, for every thread of the process.
 */
export function keepWebAssemblyOnBaseline(): void {
  setFlagsFromString('--no-wasm-dynamic-tiering');
  setFlagsFromString('--no-wasm-tier-up');
}
