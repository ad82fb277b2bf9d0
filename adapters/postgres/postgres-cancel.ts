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
export function cancelStatement(client: CancellableClient): Promise<void> {
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
