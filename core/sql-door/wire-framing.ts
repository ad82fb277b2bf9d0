/**
 * Cutting the client's byte stream into messages, bounded before anything is buffered: a message's length
 * is checked as soon as its header arrives, and bytes are copied once per message however they are split
 * into reads, so a client that announces a huge message, or streams one in small writes, costs neither
 * memory nor CPU beyond what the limits allow (docs/sql.md#limits).
 */

/**
 * The startup message (and SSLRequest, GSSENCRequest, CancelRequest before it) is at most this long, as
 * PostgreSQL's MAX_STARTUP_PACKET_LENGTH: parameter names and values of a few drivers' settings.
 */
export const MAX_STARTUP_BYTES = 10_000;
/**
 * A password message is at most this long: the door's password is a bearer token or a JWT, and a JWT with
 * many claims runs to a few KiB. PostgreSQL caps authentication messages similarly.
 */
export const MAX_PASSWORD_BYTES = 16_384;

/**
 * Checks the messages before the startup message completes, which pg-gateway frames and would buffer whole
 * whatever length they announce: reports the first length outside 8..MAX_STARTUP_BYTES, before pg-gateway
 * sees more than the read that carried its header. These messages have no type byte: a length, then the body.
 */
export class StartupGuard {
  /** Bytes of the current message still to come, its header included until read. */
  private left = 0;
  private readonly header = Buffer.alloc(4);
  private headerBytes = 0;

  /** The invalid length the chunk announces, or undefined while every message is within bounds. */
  inspect(chunk: Buffer): number | undefined {
    let offset = 0;
    while (offset < chunk.length) {
      if (this.left > 0) {
        const skipped = Math.min(this.left, chunk.length - offset);
        this.left -= skipped;
        offset += skipped;
        continue;
      }
      const copied = chunk.copy(this.header, this.headerBytes, offset, offset + 4 - this.headerBytes);
      this.headerBytes += copied;
      offset += copied;
      if (this.headerBytes < 4) return undefined;
      this.headerBytes = 0;
      const length = this.header.readInt32BE(0);
      if (length < 8 || length > MAX_STARTUP_BYTES) return length;
      this.left = length - 4;
    }
    return undefined;
  }
}

/**
 * Frames the typed messages after the startup message (a type byte, a length that counts itself, the body).
 * Reads are kept as they came until a message is whole, then joined once: linear in the bytes received.
 */
export class MessageFramer {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** The whole length (type byte included) of the message being collected, once its header is in. */
  private needed: number | undefined;

  /**
   * Adds a read; pushes each whole message onto `messages`. Returns the announced length of a message over
   * `maxBytes` (or under 4), after which the stream cannot be framed and nothing more should be pushed.
   */
  push(chunk: Buffer, maxBytes: number, messages: Buffer[]): number | undefined {
    if (chunk.length === 0) return undefined;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (this.needed === undefined) {
        if (this.buffered < 5) return undefined;
        const head = this.head(5);
        const length = head.readUInt32BE(1);
        if (length < 4 || length > maxBytes) return length;
        this.needed = 1 + length;
      }
      if (this.buffered < this.needed) return undefined;
      const whole = this.chunks.length === 1 ? this.chunks[0] as Buffer : Buffer.concat(this.chunks, this.buffered);
      messages.push(whole.subarray(0, this.needed));
      const rest = whole.subarray(this.needed);
      this.chunks = rest.length === 0 ? [] : [rest];
      this.buffered = rest.length;
      this.needed = undefined;
    }
  }

  /** The first `bytes` bytes received, joining only the reads they span. */
  private head(bytes: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= bytes) return first;
    const joined = Buffer.concat(this.chunks, this.buffered);
    this.chunks = [joined];
    return joined;
  }
}
