import {
  circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleWhen, isTaskCancelledError, retry, timeout, TimeoutStrategy, wrap,
} from 'cockatiel';

/** How hard the transport tries. The defaults are for production; tests shorten the waits. */
export interface ResilienceTuning {
  /** Attempts after the first (cockatiel's `maxAttempts` counts retries): 2 makes 3 attempts. */
  retries: number;
  /** First backoff delay; later ones grow exponentially, with jitter. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Consecutive failed attempts, over all calls of the transport, that open the circuit. */
  breakerThreshold: number;
  /** How long the open circuit refuses calls before it lets one through to test the runtime. */
  halfOpenAfterMs: number;
}

export const DEFAULT_TUNING: ResilienceTuning = {
  retries: 2,
  initialDelayMs: 100,
  maxDelayMs: 2000,
  breakerThreshold: 5,
  halfOpenAfterMs: 10_000,
};

/** A failed attempt that may pass: the runtime was unreachable or answered 408, 429 or 5xx. */
export class TransientError extends Error {}

/** Timeouts count like transient failures: a runtime that does not answer is as down as one that says so. */
function isTransient(error: unknown): boolean {
  return error instanceof TransientError || isTaskCancelledError(error);
}

/**
 * The policy of every runtime call: retry (outermost) around the circuit breaker around a per-attempt
 * timeout. The breaker sits inside the retry so it counts attempts, and an open circuit (not transient)
 * ends the retries at once. Every call of the transport shares this one policy, hence one breaker.
 * Refusals (4xx) and protocol errors are neither retried nor counted: the runtime is up.
 */
export function runtimePolicy(timeoutMs: number, tuning: ResilienceTuning) {
  return wrap(
    retry(handleWhen(isTransient), {
      maxAttempts: tuning.retries,
      backoff: new ExponentialBackoff({ initialDelay: tuning.initialDelayMs, maxDelay: tuning.maxDelayMs }),
    }),
    circuitBreaker(handleWhen(isTransient), { halfOpenAfter: tuning.halfOpenAfterMs, breaker: new ConsecutiveBreaker(tuning.breakerThreshold) }),
    timeout(timeoutMs, TimeoutStrategy.Aggressive),
  );
}
