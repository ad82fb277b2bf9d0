/**
 * The SQL front door (docs/sql.md): a TCP listener speaking the PostgreSQL wire protocol, one
 * `WireSession` per connection, at most `sql.maxConnections` of them (the next is refused with 53300), and
 * the cancel keys that let a CancelRequest, which arrives on a connection of its own, reach its session.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { Logger } from 'pino';
import type { SqlConfig } from '../config/config-types.js';
import type { AuthScheme } from '../plugin-api/auth-scheme.js';
import type { VdbHandles } from '../vdb/vdb-handles.js';
import type { CatalogResponder } from './catalog/index.js';
import { WireSession, type SessionDeps } from './wire-session.js';

export interface SqlDoorOptions {
  config: SqlConfig;
  /** `server.maxResultBytes`: the largest result a statement sends. */
  maxResultBytes: number;
  scheme: AuthScheme;
  handles: VdbHandles;
  logger: Logger;
  /** The catalog answers (ended with the door); without them, catalog statements meet the analyzer, which refuses them. */
  catalog?: CatalogResponder;
}

export class SqlDoor {
  private readonly sessions = new Map<number, WireSession>();
  private nextProcessId = 1_000 + Math.floor(Math.random() * 100_000);

  private constructor(
    private readonly server: Server,
    readonly address: { host: string; port: number },
    private readonly catalog: CatalogResponder | undefined,
  ) {}

  /** Listens on `sql.host`:`sql.port` (0: any free port, as tests ask). */
  static async start(options: SqlDoorOptions): Promise<SqlDoor> {
    const { config } = options;
    const tls = config.tls && { cert: readFileSync(config.tls.cert), key: readFileSync(config.tls.key) };
    let door: SqlDoor | undefined;
    const server = createServer((socket) => door?.accept(socket, context, config.maxConnections));
    const context: SessionDeps = {
      scheme: options.scheme,
      handles: options.handles,
      catalog: options.catalog,
      settings: { allowWrites: config.allowWrites, statementTimeoutMs: config.statementTimeoutMs, maxResultBytes: options.maxResultBytes },
      idleTimeoutMs: config.idleTimeoutMs,
      tls,
      logger: options.logger,
      cancel: (processId, secret) => door?.sessions.get(processId)?.cancel(secret),
    };
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const { address, port } = server.address() as AddressInfo;
    door = new SqlDoor(server, { host: address, port }, options.catalog);
    return door;
  }

  private accept(socket: Socket, context: SessionDeps, maxConnections: number): void {
    socket.setNoDelay(true);
    const processId = this.nextProcessId++;
    const overLimit = this.sessions.size >= maxConnections;
    const session = new WireSession(socket, context, {
      processId,
      overLimit,
      onClose: () => {
        if (this.sessions.get(processId) === session) this.sessions.delete(processId);
      },
    });
    if (!overLimit) this.sessions.set(processId, session);
  }

  /** Stops listening and ends every connection (57P01), as a PostgreSQL server does at shutdown. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of this.sessions.values()) session.terminate();
    await closed;
    await this.catalog?.close();
  }
}
