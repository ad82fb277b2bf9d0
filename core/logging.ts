import { pino, type Logger } from 'pino';

/** Keys that may hold a secret anywhere in a logged object; pino replaces their values. */
const REDACTED_PATHS = [
  'req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie',
  '*.password', '*.token', '*.secret', '*.connectionString', '*.bearerToken',
  '*.*.password', '*.*.token', '*.*.secret', '*.*.connectionString',
];

/** JSON logs on stdout (or the given destination, for tests). */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { name: 'vdb-service', level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options);
}
