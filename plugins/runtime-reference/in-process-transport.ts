import type { RuntimeTransport } from '../../core/tasks/runtime-contract.js';
import type { ReferenceRuntime } from './reference-runtime.js';

/**
 * The reference runtime as a transport in the service's own process. Documents cross by value, as they
 * would over HTTP: the service's authorized context is shared and frozen, and the runtime's snapshots are
 * its own state, so neither side may hold an object of the other.
 */
export function inProcessTransport(runtime: ReferenceRuntime): RuntimeTransport {
  return {
    start: async (ref, document) => structuredClone(runtime.start(structuredClone(ref), structuredClone(document))),
    advance: async (ref, document) => structuredClone(runtime.advance(structuredClone(ref), structuredClone(document))),
    read: async (ref) => structuredClone(runtime.read(structuredClone(ref))),
    cancel: async (ref) => structuredClone(runtime.cancel(structuredClone(ref))),
  };
}
