import { pino, type DestinationStream, type Logger } from 'pino';

/** Keys that may hold a secret anywhere in a logged object; pino replaces their values. */
const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  '*.password', '*.token', '*.secret', '*.connectionString', '*.bearerToken',
  '*.*.password', '*.*.token', '*.*.secret', '*.*.connectionString',
];

/** A batch is written once about this many bytes wait (counted as UTF-16 units: some 30 access lines), or after FLUSH_MS. */
const MIN_WRITE_BYTES = 4096;
const FLUSH_MS = 250;

/** A log destination whose waiting lines can be written out at once. */
export type LogDestination = DestinationStream & { flushSync(): void };

/**
 * Keeps the lines pino writes until MIN_WRITE_BYTES wait or FLUSH_MS passed, then hands them to the
 * destination as one text. sonic-boom's own batching measures its whole pending text again at every line
 * (`Buffer.byteLength`, after flattening it), which made a batch cost its square.
 */
class LineBatch implements LogDestination {
  private lines: string[] = [];
  /** UTF-16 units: a threshold, not the exact bytes. */
  private length = 0;

  constructor(private readonly out: DestinationStream) {
    setInterval(() => this.flushSync(), FLUSH_MS).unref();
  }

  write(line: string): void {
    this.lines.push(line);
    this.length += line.length;
    if (this.length >= MIN_WRITE_BYTES) this.flushSync();
  }

  flushSync(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.length = 0;
    this.out.write(text);
  }
}

/**
 * Where logs go by default: stdout, written asynchronously. Lines queued while a write is in flight go out
 * together in the next one (pino's advice for throughput); pino flushes what is queued when the process exits.
 *
 * `batched` (the server, `vdb-service start`): lines wait in memory until MIN_WRITE_BYTES are queued or
 * FLUSH_MS passed, then go out in one synchronous write; what still waits is written as the process exits.
 * Synchronous because an asynchronous write is a job for libuv's thread pool, and its hand-offs cost a busy
 * server a few µs a request more than the write itself (bench/README.md, the peers benchmark). A log reader
 * that stops reading then holds the service back, as with pino's default destination, instead of the
 * waiting lines filling its memory.
 */
export function logDestination(dest: number | string = 1, options: { batched?: boolean } = {}): LogDestination {
  if (options.batched !== true) return pino.destination({ dest, sync: false });
  const batch = new LineBatch(pino.destination({ dest, sync: true }));
  process.once('exit', () => {
    try {
      batch.flushSync();
    } catch {
      // the reader is gone (EPIPE): nothing is left to write to
    }
  });
  return batch;
}

/** JSON logs on stdout (or the given destination, for tests and benchmarks). */
export function createLogger(level: string, destination: DestinationStream = logDestination()): Logger {
  return pino({ name: 'vdb-service', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
