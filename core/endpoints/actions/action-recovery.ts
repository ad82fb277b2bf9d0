/**
 * Recovery of action runs a dead process left unfinished (docs/actions.md#recovery): at startup and every
 * `actions.recoveryIntervalSeconds`, each journal hands out its abandoned runs one at a time (a claim only
 * one instance gets), and their compensations run in reverse, each recorded in its own transaction so
 * that none runs twice.
 */
import type { Logger } from 'pino';
import { messageOf } from '../../plugin-api/errors.js';
import type { Datasource } from '../../plugin-api/sql-dialect.js';
import { runtimeOver } from '../../sql/datasource-runtime.js';
import { transientFailure } from './action-execution.js';
import type { ActionJournal, ActionJournals, JournalRun, JournalStep } from './action-journal.js';

export interface RecoveryOptions {
  journals: ActionJournals;
  /** A datasource of the service, by name: where a compensation runs. */
  datasource: (name: string) => Promise<Datasource | undefined>;
  /** The time limit of each compensation. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * Recovers every abandoned run the journals hand out now; resolves with how many it took. A journal that
 * cannot be reached is skipped until the next pass.
 */
export async function recoverRuns(options: RecoveryOptions): Promise<number> {
  let taken = 0;
  for (const journal of options.journals.all()) {
    // a run let go for a later pass is not taken again in this one
    const seen = new Set<string>();
    for (;;) {
      let run: JournalRun | undefined;
      try {
        run = await journal.claim();
      } catch (error) {
        options.logger.warn({ journal: journal.name, reason: messageOf(error) }, 'the journal of action runs cannot be read now; recovery retries later');
        break;
      }
      if (!run || seen.has(run.run)) break;
      seen.add(run.run);
      taken += 1;
      await recoverRun(journal, run, options).catch((error: unknown) => {
        options.logger.warn({ run: run.run, reason: messageOf(error) }, 'an action run could not be recovered now; recovery retries later');
      });
    }
    await journal.purge().catch(() => undefined);
  }
  return taken;
}

/** Undoes one claimed run, last step first; ends it `recovered`, `needs_attention`, or left to a later pass. */
async function recoverRun(journal: ActionJournal, run: JournalRun, options: RecoveryOptions): Promise<void> {
  const { logger } = options;
  logger.warn({ run: run.run, action: run.action, instance: run.instance }, 'recovering an action run left unfinished: compensating its operations in reverse');
  const pending = run.steps.filter((step) => (step.status === 'done' || step.status === 'started') && step.compensationStatus !== 'compensated').reverse();
  for (const step of pending) {
    const problem = await compensateStep(journal, run, step, options);
    if (problem === 'retry') {
      await journal.setState(run.run, 'compensating', { lease: 0 }).catch(() => undefined);
      return;
    }
    if (problem !== undefined) {
      const repair = { operation: step.name, position: step.position, compensation: step.compensation, reason: problem };
      await journal.compensated(run.run, step.position, 'failed', problem).catch(() => undefined);
      await journal.setState(run.run, 'needs_attention', { problem: repair }).catch(() => undefined);
      logger.error({ run: run.run, action: run.action, ...repair }, 'an action run cannot be compensated: its operation stays applied and must be undone by hand');
      journal.settings.observer?.runNeedsAttention(run.action);
      journal.settings.observer?.runRecovered(run.action, 'needs_attention');
      return;
    }
  }
  await journal.setState(run.run, 'recovered');
  journal.settings.observer?.runRecovered(run.action, 'compensated');
  logger.info({ run: run.run, action: run.action, compensated: pending.length }, 'action run recovered');
}

/**
 * One step's compensation and its record, in one transaction where they share a database; `undefined` when
 * done, `retry` when its database cannot be reached now, otherwise why it cannot succeed.
 */
async function compensateStep(journal: ActionJournal, run: JournalRun, step: JournalStep, options: RecoveryOptions): Promise<string | undefined> {
  const { compensation } = step;
  // an operation without a rollback is left as it is, as a failed action leaves it
  if (compensation === null) return undefined;
  if ('unresolved' in compensation) return compensation.unresolved;
  const datasource = await options.datasource(compensation.datasource);
  // an instance of another configuration shares the journal: one that has the datasource recovers the run
  if (!datasource) return 'retry';
  // as the role the operation ran as: the compensation is the caller's statement, undone for them
  const executor = runtimeOver(datasource).forCaller(compensation.role === null ? undefined : { role: compensation.role, readOnly: false }, { timeoutMs: options.timeoutMs });
  const shared = journal.sharesTransactionsWith(datasource);
  try {
    await executor.transaction(async (transaction) => {
      if (shared) await journal.compensated(run.run, step.position, 'compensated', null, transaction);
      await transaction.query(compensation.sql, compensation.bindings);
    });
    if (!shared) await journal.compensated(run.run, step.position, 'compensated', null);
    return undefined;
  } catch (error) {
    return transientFailure(error) ? 'retry' : messageOf(error);
  }
}

/** Runs recovery now, then every `intervalSeconds` until stopped; a pass never overlaps the one before. */
export function startRecovery(options: RecoveryOptions, intervalSeconds: number): { first: Promise<number>; stop: () => Promise<void> } {
  let running: Promise<number> = recoverRuns(options);
  let busy = true;
  const settle = () => {
    busy = false;
  };
  void running.then(settle, settle);
  const first = running;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    running = recoverRuns(options);
    void running.then(settle, settle);
  }, intervalSeconds * 1000);
  timer.unref();
  return {
    first,
    stop: async () => {
      clearInterval(timer);
      await running.catch(() => undefined);
    },
  };
}
