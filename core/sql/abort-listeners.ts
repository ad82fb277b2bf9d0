/**
 * One listener per AbortSignal, with the callbacks of its statements behind it. A request's signal (its
 * connection's) serves each of its statements in turn; adding and removing a listener on Node's EventTarget
 * for every statement cost 4.5–5k instructions per request of the query route (bench/README.md, session 7),
 * a Set's add and delete a fraction of that.
 */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts, unless `offAbort` came first. As with `addEventListener`, a
 * signal that has already aborted calls nothing: check `signal.aborted` first.
 */
export function onAbort(signal: AbortSignal, callback: () => void): void {
  let callbacks = waiting.get(signal);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    signal.addEventListener('abort', () => {
      const due = [...created];
      created.clear();
      for (const call of due) {
        try {
          call();
        } catch (error) {
          // as EventTarget reports a listener's error: the other callbacks still run
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    }, { once: true });
    waiting.set(signal, (callbacks = created));
  }
  callbacks.add(callback);
}

/** Stops waiting for the signal with this callback (the statement has ended). */
export function offAbort(signal: AbortSignal, callback: () => void): void {
  waiting.get(signal)?.delete(callback);
}
