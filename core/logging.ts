import { pino, type Logger } from 'pino';

/** Keys that may hold a secret anywhere in a logged object; pino replaces their values. */
const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  '*.password', '*.token', '*.secret', '*.connectionString', '*.bearerToken',
  '*.*.password', '*.*.token', '*.*.secret', '*.*.connectionString',
];

/** A batched destination writes once this many bytes wait (about 15 access lines), or after FLUSH_MS. */
const MIN_WRITE_BYTES = 4096;
const FLUSH_MS = 250;

/**
 * Where logs go by default: stdout, written asynchronously. Lines queued while a write is in flight go out
 * together in the next one (pino's advice for throughput); pino flushes what is queued when the process exits.
 *
 * `batched` (the server, `vdb-service start`): writes wait for at least MIN_WRITE_BYTES, and go out at
 * least every FLUSH_MS. Each write is a job for libuv's thread pool, and one per few lines cost a busy server
 * more than its access lines themselves (bench/README.md, the peers benchmark); a line then reaches stdout
 * at most FLUSH_MS after it was logged.
 */
export function logDestination(dest: number | string = 1, options: { batched?: boolean } = {}): NodeJS.WritableStream {
  const batching = options.batched === true ? { minLength: MIN_WRITE_BYTES, periodicFlush: FLUSH_MS } : {};
  return pino.destination({ dest, sync: false, ...batching }) as unknown as NodeJS.WritableStream;
}

/** JSON logs on stdout (or the given destination, for tests and benchmarks). */
export function createLogger(level: string, destination: NodeJS.WritableStream = logDestination()): Logger {
  return pino({ name: 'vdb-service', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
