import type { ServerResponse } from 'node:http';

/**
 * Aborted when the request has ended for its caller: the client went away before the answer was written,
 * or `timeoutMs` (`server.requestTimeoutMs`) passed. The statements run for the request take it
 * (`QueryOptions.signal`), so a database cancels them rather than running on for nobody.
 */
export function requestSignal(res: ServerResponse, timeoutMs: number): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('the request ran out of time')), timeoutMs);
  // a request answered in time leaves no timer behind to hold the process
  timer.unref();
  res.once('close', () => {
    clearTimeout(timer);
    if (!res.writableFinished) controller.abort(new Error('the client went away'));
  });
  return controller.signal;
}
