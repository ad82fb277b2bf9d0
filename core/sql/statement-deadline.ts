import type { Deadline } from '../plugin-api/sql-dialect.js';

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
 * One statement's deadline (or a transaction's, re-armed as each of its statements starts and ends): it
 * expires, with the 57014 error, once the limit plus the slack has passed since the last `arm`.
 */
export class StatementDeadline implements Deadline {
  expired: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  // the runtime's settling listens to every deadline and an adapter's to most: a Set's add and delete cost
  // a fraction of an array's splice
  private readonly listeners = new Set<(error: Error) => void>();

  constructor(private readonly timeoutMs: number) {
    this.arm();
  }

  /** Starts the wait again, from now; nothing once expired. */
  arm(): void {
    if (this.expired !== undefined) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.expire(), this.timeoutMs + DEADLINE_SLACK_MS);
  }

  disarm(): void {
    clearTimeout(this.timer);
  }

  onExpire(listener: (error: Error) => void): () => void {
    const { expired } = this;
    if (expired !== undefined) {
      queueMicrotask(() => listener(expired));
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private expire(): void {
    const error = Object.assign(
      new Error(`the database did not answer within the statement's time limit (${this.timeoutMs} ms) and ${DEADLINE_SLACK_MS} ms more`),
      { code: '57014', [DEADLINE]: true },
    );
    this.expired = error;
    const listeners = [...this.listeners];
    this.listeners.clear();
    for (const listener of listeners) listener(error);
  }
}

/** Whether a statement failed at its client-side deadline: its connection must not be reused. */
export function isDeadlineExceeded(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [DEADLINE]?: boolean })[DEADLINE] === true;
}

/**
 * Calls `expire` with the deadline's error once `deadline` (`QueryOptions.deadline`) expires; returns what
 * stops listening. An adapter's side of the runtime's deadline: it arms no timer of its own.
 */
export function onDeadline(deadline: Deadline | undefined, expire: (error: Error) => void): () => void {
  return deadline === undefined ? () => undefined : deadline.onExpire(expire);
}

/**
 * The time limit of a datasource's `ping`: with the slack, its deadline is the readiness check's bound (3 s),
 * so a ping on a server that stopped answering ends and frees its connection instead of holding it.
 */
export const PING_TIMEOUT_MS = 1_000;
