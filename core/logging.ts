import { pino, type Logger } from 'pino';

/** Keys that may hold a secret anywhere in a logged object; pino replaces their values. */
const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  '*.password', '*.token', '*.secret', '*.connectionString', '*.bearerToken',
  '*.*.password', '*.*.token', '*.*.secret', '*.*.connectionString',
];

/**
 * Where logs go by default: stdout, written asynchronously. Lines queued while a write is in flight go out
 * together in the next one, so a busy server makes one write per batch instead of one per request (pino's
 * advice for throughput); pino flushes what is queued when the process exits.
 */
export function logDestination(dest: number | string = 1): NodeJS.WritableStream {
  return pino.destination({ dest, sync: false }) as unknown as NodeJS.WritableStream;
}

/** JSON logs on stdout (or the given destination, for tests and benchmarks). */
export function createLogger(level: string, destination: NodeJS.WritableStream = logDestination()): Logger {
  return pino({ name: 'vdb-service', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
