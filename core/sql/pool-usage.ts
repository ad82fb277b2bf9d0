import type { Datasource } from '../plugin-api/sql-dialect.js';

/** Connections of a datasource's pool: in use, idle, and requests waiting for one. */
export interface PoolUsage {
  used: number;
  free: number;
  pending: number;
}

/** The part of knex's pool (tarn) read here. */
interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/**
 * The usage of the datasource's knex pool, read from tarn's counters (no query); undefined when the
 * datasource has no such pool.
 */
export function poolUsage(datasource: Datasource): PoolUsage | undefined {
  const pool = (datasource.knex?.client as { pool?: Partial<TarnPool> } | undefined)?.pool;
  if (typeof pool?.numUsed !== 'function' || typeof pool.numFree !== 'function' || typeof pool.numPendingAcquires !== 'function') return undefined;
  return { used: pool.numUsed(), free: pool.numFree(), pending: pool.numPendingAcquires() };
}
