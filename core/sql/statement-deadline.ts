/**
 * The client's own deadline of a statement, beside the time limit the server enforces
 * (`QueryOptions.timeoutMs`): a server that stopped answering (frozen, a network that drops packets
 * silently) can enforce nothing, and the statement's connection would wait forever. Past the limit and
 * this slack, the runtime seam (datasource-runtime.ts) gives the statement up: it fails with 57014, as the
 * server's limit would, and the adapter, told by `QueryOptions.deadline`, destroys the statement's
 * connection, whose state is unknown, rather than reusing it.
 */
export const DEADLINE_SLACK_MS = 2_000;

const DEADLINE = Symbol('statement deadline');

/**
 * One statement's deadline (or a transaction's, re-armed as each of its statements starts and ends): `signal`
 * aborts, its reason the 57014 error, once the limit plus the slack has passed since the last `arm`.
 */
export class StatementDeadline {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Starts the wait again, from now; nothing once expired. */
  arm(): void {
    if (this.controller.signal.aborted) return;
    clearTimeout(this.timer);
    const { timeoutMs } = this;
    this.timer = setTimeout(() => this.controller.abort(Object.assign(
      new Error(`the database did not answer within the statement's time limit (${timeoutMs} ms) and ${DEADLINE_SLACK_MS} ms more`),
      { code: '57014', [DEADLINE]: true },
    )), timeoutMs + DEADLINE_SLACK_MS);
  }

  disarm(): void {
    clearTimeout(this.timer);
  }
}

/** Whether a statement failed at its client-side deadline: its connection must not be reused. */
export function isDeadlineExceeded(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [DEADLINE]?: boolean })[DEADLINE] === true;
}

/**
 * Calls `expire` with the deadline's error once `deadline` (`QueryOptions.deadline`) aborts; returns what
 * stops listening. An adapter's side of the runtime's deadline: it arms no timer of its own.
 */
export function onDeadline(deadline: AbortSignal | undefined, expire: (error: Error) => void): () => void {
  if (deadline === undefined) return () => undefined;
  const listener = () => expire(deadline.reason as Error);
  if (deadline.aborted) {
    queueMicrotask(listener);
    return () => undefined;
  }
  deadline.addEventListener('abort', listener, { once: true });
  return () => deadline.removeEventListener('abort', listener);
}

/**
 * The time limit of a datasource's `ping`: with the slack, its deadline is the readiness check's bound (3 s),
 * so a ping on a server that stopped answering ends and frees its connection instead of holding it.
 */
export const PING_TIMEOUT_MS = 1_000;
