import { WorkerRpc, type WorkerRpcErrors } from '../../core/plugin-api/adapter-kit.js';
import { connectionFailure, errorFromWire, statementCanceled, workerStopped } from './pglite-errors.js';
import type { PgliteAnswers, PgliteCommand } from './pglite-messages.js';

/**
 * How long a statement whose request ended may still run before its worker is ended; one that ends within it
 * answers as it would have. Ending the worker reopens the database (seconds of CPU; an in-memory one loses
 * what was written since its snapshot), which a statement about to finish on its own does not deserve: a
 * client that hangs up mid-lookup would cost every other caller that much.
 */
const ABANDON_GRACE_MS = 250;

/** Whose turn a request takes (pglite-host.ts). */
export interface Turn {
  /** A caller's role set, or '' for the service's own calls. */
  lane: string;
  /** A caller's read-only single statement: ended by `preempt`, it may simply run again. */
  preemptible: boolean;
}

/**
 * A request the thread ended before it answered, at no fault of its own: sent behind others, it never ran;
 * or, `preempted`, it was a caller's read-only statement ended for another caller's turn. Either way its
 * owner may send it again to the next worker.
 */
export class CutOff extends Error {
  constructor(readonly preempted = false) {
    super(preempted ? 'the embedded database worker was ended for another caller\'s turn' : 'the embedded database worker stopped before this request ran');
    this.name = 'CutOff';
  }
}

const errors: WorkerRpcErrors = {
  canceled: statementCanceled,
  stopped: workerStopped,
  failed: (cause) => connectionFailure('the embedded database worker failed', cause),
  cutOff: () => new CutOff(),
  fromWire: errorFromWire,
  // a bound value structured clone cannot carry: it never reached the worker
  unsendable: (cause) => (cause instanceof Error ? cause : new Error(String(cause))),
};

/**
 * One worker thread holding one PGlite instance (pglite-worker.ts), reached through the adapter kit's
 * WorkerRpc; its owner (pglite-host.ts) orders the calls and opens another once it stopped.
 */
export class PgliteThread extends WorkerRpc<PgliteCommand, PgliteAnswers, Turn> {
  /**
   * @param epoch which opening of its datasource this is: a transaction runs on the thread it began on, or
   *   fails; a thread opened ahead of its use (pglite-host.ts) is given its epoch when it is taken
   * @param onTurn called when a request is sent behind others, and when a request's turn comes on the worker
   */
  constructor(public epoch: number, name: string, onTurn?: () => void) {
    super({ module: new URL('./pglite-worker.js', import.meta.url), name, errors, abortGraceMs: ABANDON_GRACE_MS, ...(onTurn === undefined ? {} : { onTurn }) });
  }

  /**
   * Ends the thread for another caller's turn: the request running fails with CutOff (preempted), to run
   * again later; the ones behind it as cut off before they ran.
   */
  preempt(): void {
    this.endRunning(new CutOff(true));
  }
}
