import pg from 'pg';
import type { StreamingClient } from './postgres-stream.js';

/** The statement that sets a new session to a scope; its values are bound, it names no identifier. */
export interface SessionSetup {
  sql: string;
  bindings: readonly unknown[];
}

/** Where a statement outside a transaction gets its connection, and gives it back. */
export interface ConnectionSource {
  acquire(): Promise<StreamingClient>;
  /** A connection whose statement failed in a way that leaves its state unknown is closed, not reused. */
  release(connection: StreamingClient, broken?: Error): void;
}

/**
 * The connections of one caller scope for single statements: a pg pool whose every connection runs the
 * scope's setup once, before its first statement, and is never handed out when that setup failed. pg's pool
 * rather than knex's (tarn) on this path: tarn arms a timer and builds a pending operation for every
 * acquire, a measurable share of a one-row lookup (bench/README.md).
 */
export class ScopePool implements ConnectionSource {
  private readonly pool: pg.Pool;
  /** Connections that ran the setup: a new one runs it before anything else. */
  private readonly ready = new WeakSet<pg.PoolClient>();

  constructor(config: pg.PoolConfig, private readonly setup: SessionSetup) {
    this.pool = new pg.Pool(config);
    // an idle connection the server dropped is an error of the pool, not of any statement: it is discarded
    this.pool.on('error', () => undefined);
    // pg-pool takes its own listener off a client it hands out, and a client whose socket ends then raises
    // 'error' on itself, which would end the process: its statement learns of the loss from its query, and
    // the client is released as broken (destroyed)
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  async acquire(): Promise<StreamingClient> {
    const client = await this.pool.connect();
    if (this.ready.has(client)) return client as unknown as StreamingClient;
    try {
      await client.query(this.setup.sql, [...this.setup.bindings]);
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
    this.ready.add(client);
    return client as unknown as StreamingClient;
  }

  release(connection: StreamingClient, broken?: Error): void {
    (connection as unknown as pg.PoolClient).release(broken);
    // ended at once: a server that no longer answers would hold a polite end open
    if (broken) destroySocket(connection);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** Closes a pg client's socket without the protocol's goodbye. */
export function destroySocket(connection: StreamingClient): void {
  (connection as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
