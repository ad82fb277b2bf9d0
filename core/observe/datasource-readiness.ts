import type { Datasource } from '../plugin-api/sql-dialect.js';

/** Whether one datasource answered its trivial statement (`Datasource.ping`) in time. */
export interface DatasourceStatus {
  name: string;
  up: boolean;
}

/**
 * How long a datasource may take to answer the check: a server that accepts connections but does not answer
 * (frozen, a network that drops packets silently) counts as down rather than holding the check.
 */
const CHECK_LIMIT_MS = 3_000;
/** A check this recent answers again: readiness probes, health and scrapes never add up to a ping storm. */
const REUSE_MS = 1_000;

/**
 * Whether each datasource the service opened answers: `GET /observe/ready`, the `datasources` summary of
 * health and the `vdb_datasource_up` gauge read it (docs/observability.md). One check runs at a time; callers
 * that come while it runs, or within REUSE_MS of its end, share its answer.
 */
export class DatasourceReadiness {
  private running: Promise<DatasourceStatus[]> | undefined;
  private last: { at: number; statuses: DatasourceStatus[] } | undefined;

  constructor(private readonly opened: () => Promise<readonly (readonly [string, Datasource])[]>) {}

  check(): Promise<DatasourceStatus[]> {
    if (this.last && performance.now() - this.last.at < REUSE_MS) return Promise.resolve(this.last.statuses);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * The answer of the last check, at once, starting a new one when it is stale: health answers a liveness
   * probe in no time even while a datasource takes its whole bound to answer (or PGlite's queue delays the
   * check). Only the first call, with no check done yet, waits for one.
   */
  latest(): Promise<DatasourceStatus[]> {
    const { last } = this;
    if (last === undefined) return this.check();
    this.check().catch(() => undefined);
    return Promise.resolve(last.statuses);
  }

  private async run(): Promise<DatasourceStatus[]> {
    const datasources = await this.opened();
    const statuses = await Promise.all(datasources.map(async ([name, datasource]) => ({ name, up: await answers(datasource) })));
    this.last = { at: performance.now(), statuses };
    return statuses;
  }
}

async function answers(datasource: Datasource): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CHECK_LIMIT_MS)));
  try {
    return await Promise.race([datasource.ping().then(() => true, () => false), limit]);
  } finally {
    clearTimeout(timer);
  }
}
