/**
 * The client's own deadline of a statement, beside the time limit the server enforces
 * (`QueryOptions.timeoutMs`): a server that stopped answering (frozen, a network that drops packets
 * silently) can enforce nothing, and the statement's connection would wait forever. Past the limit and
 * this slack, the datasource gives the statement up: it fails with 57014, as the server's limit would,
 * and its connection, whose state is unknown, is destroyed rather than reused.
 */
export const DEADLINE_SLACK_MS = 2_000;

const DEADLINE = Symbol('statement deadline');

/** Calls `expire` once the statement's limit plus the slack has passed; returns what disarms it. No limit, no deadline. */
export function armDeadline(timeoutMs: number | undefined, expire: (error: Error) => void): () => void {
  if (timeoutMs === undefined) return () => undefined;
  const timer = setTimeout(() => expire(Object.assign(
    new Error(`the database did not answer within the statement's time limit (${timeoutMs} ms) and ${DEADLINE_SLACK_MS} ms more`),
    { code: '57014', [DEADLINE]: true },
  )), timeoutMs + DEADLINE_SLACK_MS);
  return () => clearTimeout(timer);
}

/** Whether a statement failed at its client-side deadline: its connection must not be reused. */
export function isDeadlineExceeded(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { [DEADLINE]?: boolean })[DEADLINE] === true;
}

/**
 * The time limit of a datasource's `ping`: with the slack, its deadline is the readiness check's bound (3 s),
 * so a ping on a server that stopped answering ends and frees its connection instead of holding it.
 */
export const PING_TIMEOUT_MS = 1_000;
