/**
 * The byte stream of one client connection of the SQL front door, both ways. Up to the startup message
 * pg-gateway reads it (it answers SSLRequest with the TLS upgrade and parses the startup message), behind a
 * guard of the lengths it would buffer whole (wire-framing.ts); after it the door frames the messages itself
 * and queues them, handled one at a time, in order. Answers are collected and written together by `flush`.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { PostgresConnection, type State } from 'pg-gateway';
import { WireError } from './wire-errors.js';
import { MAX_PASSWORD_BYTES, MAX_STARTUP_BYTES, MessageFramer, StartupGuard } from './wire-framing.js';
import { BackendMessages, readCancelRequest } from './wire-messages.js';

/**
 * A handler's work: done (undefined) when it needed no I/O, else its promise. Most messages of a query
 * (Parse of a known text, Bind, Execute of a described portal, Sync) need none, and a promise per message and
 * handler was a large share of the door's CPU per lookup.
 */
export type Step = Promise<void> | undefined;

/** The reader a message is read with: pg-gateway's (pg-protocol's), set on one message at a time. */
export type MessageReader = PostgresConnection['reader'];

/** What the connection hands on. */
export interface ConnectionHandlers {
  /** The startup message: pg-gateway's state holds its parameters. */
  startup(state: State): void;
  /** A CancelRequest, which comes instead of a startup message on a connection of its own. */
  cancelRequest(processId: number, secret: number): void;
  /** A message after the startup message, whole, set on `reader`. Never rejects. */
  message(reader: MessageReader): Step;
  /** The socket closed. */
  closed(): void;
}

/** A longer message is refused: statements are bounded by `sql.maxStatementBytes`, parameters by this. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long a closed connection's client has to read the last answer and close its side. */
const CLOSE_GRACE_MS = 5_000;
/** Past this many messages waiting, the socket is paused until they are handled. */
const MAX_QUEUED_MESSAGES = 1_000;

export class WireConnection {
  readonly messages: BackendMessages;
  private readonly gateway: PostgresConnection;
  /** Set once the caller authenticated: its messages may be long, and many may wait. */
  private authenticated = false;
  private ended = false;
  private pending: Buffer[] = [];
  /** Bytes received after the last whole message. */
  private readonly framer = new MessageFramer();
  /** Messages received and not yet handled. */
  private readonly inbox: Buffer[] = [];
  private draining = false;

  constructor(private readonly socket: Socket, tls: { key: Buffer; cert: Buffer } | undefined, private readonly handlers: ConnectionHandlers) {
    socket.on('error', () => socket.destroy());
    // answers are written whole at Sync: each is one segment, sent at once, as PostgreSQL does
    socket.setNoDelay(true);
    socket.once('close', () => {
      this.ended = true;
      handlers.closed();
    });
    this.gateway = new PostgresConnection(socket, {
      ...(tls && { tls }),
      onMessage: (data, state) => this.beforeStartup(data, state),
      onStartup: (state) => {
        handlers.startup(state);
        return true;
      },
    });
    this.guardTlsSocket();
    this.guardStartup(socket);
    this.messages = new BackendMessages(this.gateway.writer);
  }

  /** True once the connection ended, by either side. */
  get closed(): boolean {
    return this.ended;
  }

  /**
   * Writes `message` (the startup phase's answer, AuthenticationCleartextPassword), then frames what the
   * client sends from then on: it answers only once it has read this, so nothing is left in pg-gateway's buffer.
   */
  readMessages(message: Buffer): void {
    this.gateway.socket.write(message);
    this.gateway.detach().on('data', (chunk: Buffer) => this.receive(chunk));
  }

  /** The caller authenticated: messages up to MAX_MESSAGE_BYTES, and many of them queued, are read from now on. */
  authenticatedCaller(): void {
    this.authenticated = true;
  }

  /** The next message received and not handled yet, if any: drivers send Describe and Execute together. */
  nextMessage(): Buffer | undefined {
    return this.inbox[0];
  }

  send(message: Buffer): undefined {
    this.pending.push(message);
    return undefined;
  }

  /** How many answers are collected, to drop those collected after it (`dropAfter`). */
  mark(): number {
    return this.pending.length;
  }

  dropAfter(mark: number): void {
    this.pending.length = mark;
  }

  /**
   * Writes what was collected, in one write; waits (returns a promise) while the client is slow to read,
   * so no answer piles up in memory.
   */
  flush(): Step {
    if (this.pending.length === 0 || this.ended) return undefined;
    const socket = this.gateway.socket;
    const written = socket.write(this.pending.length === 1 ? this.pending[0] as Buffer : Buffer.concat(this.pending));
    this.pending = [];
    if (written) return undefined;
    return new Promise<void>((resolve) => { socket.once('drain', resolve); socket.once('close', resolve); });
  }

  /**
   * Ends a connection whose client broke the protocol's bounds: the error is sent, and nothing more is read
   * from it (reading on would let it keep sending until the grace period ends).
   */
  drop(error: WireError): void {
    if (this.ended) return;
    this.gateway.socket.removeAllListeners('data');
    this.send(this.messages.error('FATAL', error.sqlState, error.message));
    this.end();
    this.gateway.socket.pause();
  }

  /** Sends what is pending and closes; a client that keeps its side open is cut off after a grace period. */
  end(): void {
    this.ended = true;
    const socket = this.gateway.socket;
    if (this.pending.length > 0) socket.write(Buffer.concat(this.pending));
    this.pending = [];
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  }

  /** Before the startup message: a CancelRequest is this door's, SSLRequest and startup pg-gateway's. */
  private beforeStartup(data: Uint8Array, state: State): boolean {
    if (state.hasStarted) return true;
    const cancel = readCancelRequest(data);
    if (!cancel) return false;
    this.handlers.cancelRequest(cancel.processId, cancel.secret);
    this.end();
    return true;
  }

  /**
   * pg-gateway upgrades to TLS itself but leaves its TLSSocket without an `error` listener, so a failed
   * handshake would be an uncaught error: the listener is added as the socket is assigned.
   */
  private guardTlsSocket(): void {
    let secure: TLSSocket | undefined;
    Object.defineProperty(this.gateway, 'secureSocket', {
      get: () => secure,
      set: (socket: TLSSocket) => {
        secure = socket;
        socket.on('error', () => this.socket.destroy());
      },
    });
  }

  /**
   * pg-gateway frames what comes before the startup message and buffers a message whole, whatever length it
   * announces: its read handler, which it also listens with on the TLS socket, is wrapped so that each read
   * is checked first and one announcing a length out of bounds never reaches it.
   */
  private guardStartup(socket: Socket): void {
    const gateway = this.gateway as unknown as { boundDataHandler: (chunk: Buffer) => void };
    const handle = gateway.boundDataHandler;
    const guard = new StartupGuard();
    socket.off('data', handle);
    gateway.boundDataHandler = (chunk: Buffer) => {
      const invalid = guard.inspect(chunk);
      if (invalid === undefined) return handle(chunk);
      this.drop(new WireError('08P01', `invalid length of startup packet (${invalid} bytes; at most ${MAX_STARTUP_BYTES})`, undefined, 'FATAL'));
    };
    socket.on('data', gateway.boundDataHandler);
  }

  /**
   * The messages after the startup message are framed here: pg-gateway 0.2.4 cuts every message after the
   * first of a read chunk at the wrong end (`subarray(start, length)`), which loses the pipelined messages
   * of the extended protocol. Each message is queued and handled in order, one at a time; a client that
   * sends faster than its statements run is paused.
   */
  private receive(chunk: Buffer): void {
    if (this.ended) return;
    // before authentication only a password message is expected, and it is short
    const { authenticated } = this;
    const invalid = this.framer.push(chunk, authenticated ? MAX_MESSAGE_BYTES : MAX_PASSWORD_BYTES, this.inbox);
    if (invalid !== undefined) {
      return this.drop(new WireError('08P01', `invalid message length ${invalid}${authenticated ? '' : ` (a password message holds at most ${MAX_PASSWORD_BYTES} bytes)`}`, undefined, 'FATAL'));
    }
    // an unauthenticated client is read no further while its password is checked
    if (this.inbox.length > (authenticated ? MAX_QUEUED_MESSAGES : 0)) this.gateway.socket.pause();
    if (!this.draining) this.drainInbox();
  }

  /** Handles the queued messages in order; one that waits resumes the queue when it is done. */
  private drainInbox(): void {
    this.draining = true;
    const reader = this.gateway.reader;
    while (this.inbox.length > 0 && !this.ended) {
      // every handler reads its message whole before its first await
      reader.setBuffer(0, this.inbox.shift() as Buffer);
      const waiting = this.handlers.message(reader);
      if (waiting) {
        void waiting.then(() => this.drainInbox());
        return;
      }
    }
    this.draining = false;
    if (!this.ended) this.gateway.socket.resume();
  }
}
