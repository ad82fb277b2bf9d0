/**
 * Calls of a PGlite datasource that may run together (statements and transactions, which the host orders on
 * the single session), and the ones that must run alone: reopening the session as another login, between
 * whose steps no statement may run.
 */
export class SessionLock {
  private running = 0;
  private alone: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  async shared<T>(call: () => Promise<T>): Promise<T> {
    while (this.alone !== undefined) await this.alone;
    this.running += 1;
    try {
      return await call();
    } finally {
      this.running -= 1;
      if (this.running === 0) this.drained?.();
    }
  }

  /** Waits for the calls under way, and holds back new ones until `call` ends. */
  async exclusive<T>(call: () => Promise<T>): Promise<T> {
    while (this.alone !== undefined) await this.alone;
    let release = () => undefined as void;
    this.alone = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      if (this.running > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      return await call();
    } finally {
      this.alone = undefined;
      release();
    }
  }
}
