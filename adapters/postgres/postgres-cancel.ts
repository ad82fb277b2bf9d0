import pg from 'pg';

/** What a cancel request needs of a pooled pg client: its backend's key and where its server is. */
export interface CancellableClient {
  readonly processID: number | null;
  readonly secretKey: number | null;
  readonly connectionParameters: { readonly host: string; readonly port: number; readonly ssl?: unknown };
}

/** The part of pg's Connection (untyped in @types/pg) a cancel request uses. */
interface CancelConnection {
  readonly stream: { destroy(): void };
  connect(port: number | string, host?: string): void;
  requestSsl(): void;
  cancel(processID: number, secretKey: number): void;
  once(event: 'connect' | 'sslconnect' | 'end', listener: () => void): void;
  on(event: 'error', listener: () => void): void;
}

/** A server that neither takes nor closes a cancel request must not hold the statement's connection forever. */
const CANCEL_LIMIT_MS = 5_000;

/**
 * Sends PostgreSQL's cancel request for the statement `client` is running, on a connection of its own (the
 * protocol's CancelRequest: the backend's process id and secret key, no login). Resolves once the server
 * closed that connection, which it does after signalling the backend, so that the client is given back to
 * its pool only when the cancel can no longer reach a later statement; a cancel that arrives when the
 * backend is idle is ignored by the server. Never rejects: a cancel that fails leaves the statement to its
 * time limit.
 */
function cancelStatement(client: CancellableClient): Promise<void> {
  const { processID, secretKey, connectionParameters: server } = client;
  if (processID === null || secretKey === null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const ssl = server.ssl !== undefined && server.ssl !== false;
    const connection = new pg.Connection(ssl ? { ssl: server.ssl as pg.ConnectionConfig['ssl'] } : {}) as unknown as CancelConnection;
    const finish = () => {
      clearTimeout(timer);
      connection.stream.destroy();
      resolve();
    };
    const timer = setTimeout(finish, CANCEL_LIMIT_MS);
    connection.once('connect', () => (ssl ? connection.requestSsl() : connection.cancel(processID, secretKey)));
    connection.once('sslconnect', () => connection.cancel(processID, secretKey));
    connection.once('end', finish);
    connection.on('error', finish);
    if (server.host.startsWith('/')) connection.connect(`${server.host}/.s.PGSQL.${server.port}`);
    else connection.connect(server.port, server.host);
  });
}

/**
 * A cancel that reaches the backend between two protocol messages (before it began the statement) is
 * ignored by the server: until the statement ends, the cancel is sent again after this pause.
 */
const CANCEL_AGAIN_MS = 500;

/**
 * Cancels the statement a client runs once asked, and again every CANCEL_AGAIN_MS until the statement has
 * ended. Whoever reads the statement's answer calls `ended`: the client may go back to its pool only when
 * its outcome runs, after a cancel in flight was served, so that no cancel reaches the next statement.
 */
export class StatementCanceller {
  private cancelling: Promise<void> | undefined;
  private again: NodeJS.Timeout | undefined;
  private over = false;

  constructor(private readonly client: CancellableClient) {}

  /** Asks the server to cancel; an abort listener as it is. */
  readonly cancel = (): void => {
    if (this.cancelling === undefined) this.send();
  };

  /** No cancel is sent any more; `outcome` runs at once, or once the cancel in flight was served. */
  ended(outcome: () => void): void {
    this.over = true;
    clearTimeout(this.again);
    if (this.cancelling === undefined) outcome();
    else void this.cancelling.then(outcome);
  }

  /** No cancel is sent any more and none is awaited: the client is destroyed, so no cancel can reach a later statement. */
  abandon(): void {
    this.over = true;
    clearTimeout(this.again);
  }

  private send(): void {
    this.cancelling = cancelStatement(this.client).then(() => {
      if (!this.over) this.again = setTimeout(() => this.send(), CANCEL_AGAIN_MS);
    });
  }
}
