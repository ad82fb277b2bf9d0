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

/** A log destination whose waiting lines can be written out at once (pino's SonicBoom). */
export type LogDestination = NodeJS.WritableStream & { flushSync(): void };

/**
 * Where logs go by default: stdout, written asynchronously. Lines queued while a write is in flight go out
 * together in the next one (pino's advice for throughput); pino flushes what is queued when the process exits.
 *
 * `batched` (the server, `vdb-service start`): lines wait in memory until MIN_WRITE_BYTES are queued or
 * FLUSH_MS passed, then go out in one synchronous write; what still waits is written as the process exits.
 * Synchronous because an asynchronous write is a job for libuv's thread pool, and its hand-offs cost a busy
 * server about 7 µs a request more than the write itself (bench/README.md, the peers benchmark). A log reader
 * that stops reading then holds the service back, as with pino's default destination, instead of the
 * waiting lines filling its memory.
 */
export function logDestination(dest: number | string = 1, options: { batched?: boolean } = {}): LogDestination {
  if (options.batched !== true) return pino.destination({ dest, sync: false }) as unknown as LogDestination;
  const destination = pino.destination({ dest, sync: true, minLength: MIN_WRITE_BYTES, periodicFlush: FLUSH_MS });
  process.once('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // the reader is gone (EPIPE): nothing is left to write to
    }
  });
  return destination as unknown as LogDestination;
}

/** JSON logs on stdout (or the given destination, for tests and benchmarks). */
export function createLogger(level: string, destination: NodeJS.WritableStream = logDestination()): Logger {
  return pino({ name: 'vdb-service', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
