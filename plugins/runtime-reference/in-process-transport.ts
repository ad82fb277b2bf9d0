import { messageOf, UpstreamError, type RuntimeTransport, type RuntimeSnapshot } from '../../core/plugin-api/index.js';
import type { ReferenceRuntime } from './reference-runtime.js';
import { asAdvanceDocument, asStartDocument } from './document-shape.js';

/**
 * The reference runtime as a transport in the service's own process. Documents cross by value, as they
 * would over HTTP: the service's authorized context is shared and frozen, and the runtime's snapshots are
 * its own state, so neither side may hold an object of the other. A refusal of the runtime (unknown task,
 * advance out of order) is `runtime_failed`, as the `http` transport reports a runtime's 4xx: the caller
 * of the Task API must not read it as a 404 or 409 of its own request.
 */
export function inProcessTransport(runtime: ReferenceRuntime): RuntimeTransport {
  async function run(operation: string, call: () => RuntimeSnapshot): Promise<RuntimeSnapshot> {
    try {
      return structuredClone(call());
    } catch (error) {
      throw new UpstreamError('runtime_failed', `the runtime refused ${operation}: ${messageOf(error)}`, { cause: error });
    }
  }
  return {
    start: (ref, document) => run('start', () => runtime.start(structuredClone(ref), asStartDocument(structuredClone(document)))),
    advance: (ref, document) => run('advance', () => runtime.advance(structuredClone(ref), asAdvanceDocument(structuredClone(document)))),
    read: (ref) => run('read', () => runtime.read(structuredClone(ref))),
    cancel: (ref) => run('cancel', () => runtime.cancel(structuredClone(ref))),
  };
}
