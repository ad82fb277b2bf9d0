/**
 * The memory a federated plan's rows may take while they stream from the sources into the engine
 * (docs/federation.md#memory): `federation.memoryLimit` is split between the engine (DuckDB's `memory_limit`)
 * and the rows in transit, so that the process stays within the limit above its own baseline. Every plan of
 * the process draws on one budget per limit: a batch is read only once its bytes are reserved, and given
 * back once the engine holds it, so a source is read no faster than the engine takes its rows.
 */

/** Bytes per unit of `federation.memoryLimit` (the config's pattern). */
const UNITS: Readonly<Record<string, number>> = {
  B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, TiB: 2 ** 40,
};

/** `512MB` → 512000000. */
export function bytesOf(limit: string): number {
  const match = /^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)$/.exec(limit.trim());
  const unit = match === null ? undefined : UNITS[match[2] as string];
  if (match === null || unit === undefined) throw new Error(`not a memory size: ${limit}`);
  return Math.floor(Number(match[1]) * unit);
}

/**
 * How a limit is split: the engine three quarters; the rows in transit an eighth, counted as the bytes of
 * their values (a JavaScript row object takes up to about twice that: the last eighth).
 */
export function splitLimit(limit: string): { engineBytes: number; transitBytes: number } {
  const total = bytesOf(limit);
  return { engineBytes: Math.floor(total * 0.75), transitBytes: Math.max(1, Math.floor(total / 8)) };
}

/** Bytes reserved for rows not yet in the engine, shared by the plans of the process; waiters served in order. */
export class TransitBudget {
  private available: number;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly capacity: number) {
    this.available = capacity;
  }

  /**
   * Waits until `bytes` (at most the capacity) are free and takes them; returns what to give back. Rejects
   * with the signal's reason when it aborts first.
   */
  async reserve(bytes: number, signal: AbortSignal): Promise<number> {
    const wanted = Math.min(Math.max(1, Math.ceil(bytes)), this.capacity);
    signal.throwIfAborted();
    if (this.waiting.length === 0 && this.available >= wanted) {
      this.available -= wanted;
      return wanted;
    }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        bytes: wanted,
        grant: () => {
          signal.removeEventListener('abort', abandon);
          resolve();
        },
      };
      const abandon = () => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        // a waiter ahead that gave up may let the next ones in
        this.serve();
        reject(signal.reason);
      };
      signal.addEventListener('abort', abandon, { once: true });
      this.waiting.push(entry);
    });
    return wanted;
  }

  /** Gives back what `reserve` took. */
  release(bytes: number): void {
    this.available += bytes;
    this.serve();
  }

  private serve(): void {
    for (let next = this.waiting[0]; next !== undefined && this.available >= next.bytes; next = this.waiting[0]) {
      this.waiting.shift();
      this.available -= next.bytes;
      next.grant();
    }
  }
}

const budgets = new Map<string, TransitBudget>();

/** The process's budget of rows in transit for plans under `limit`. */
export function transitBudget(limit: string): TransitBudget {
  let budget = budgets.get(limit);
  if (budget === undefined) budgets.set(limit, (budget = new TransitBudget(splitLimit(limit).transitBytes)));
  return budget;
}

/** The bytes of a batch's values, as the budget counts them: text by its length, anything else 8. */
export function batchBytes(rows: readonly Record<string, unknown>[]): number {
  let bytes = 0;
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      bytes += typeof value === 'string' ? value.length + 8 : 8;
    }
  }
  return bytes;
}
