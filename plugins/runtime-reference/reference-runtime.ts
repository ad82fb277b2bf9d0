/**
 * The reference agent runtime (docs/runtime/README.md): the four runtime operations on an in-memory task table. It
 * plans without a model (see answer-planner.ts), asks the service to run one query, and answers from the
 * observation. Operations are synchronous and return the stored snapshots: callers that hand them on
 * copy them (in-process-transport.ts) or serialize them (standalone.ts).
 */
import { ConflictError, InputError, NotFoundError, TERMINAL_STATES, type RuntimeTaskRef, type PendingAction, type RuntimeSnapshot, type StopReason, type TaskAdvanceDocument, type TaskStartDocument, type TaskState } from '../../core/plugin-api/index.js';
import { planAnswer } from './answer-planner.js';
import { answerArtifact, queryArtifact, resultAnswer, semanticQueryArtifact, tableArtifacts, type ArtifactDraft } from './artifacts.js';

/** Rows asked for at most, whatever the budget allows: enough for an answer, small enough to carry. */
export const MAX_QUERY_ROWS = 1000;
/** Tasks kept; beyond it the oldest are forgotten (a later call on one of them is `task_not_found`). */
export const MAX_TASKS = 1000;
const QUERY_ACTION = 'q1';

/** The one query a working task waits for, and how to word its result. */
interface PendingQuery {
  action: PendingAction;
  subject: string;
  notes: string[];
}

interface TaskRecord {
  snapshot: RuntimeSnapshot;
  pending: PendingQuery | undefined;
  /** The snapshot each advance produced, by sequence: a repeated advance answers it again. */
  advances: Map<number, RuntimeSnapshot>;
}

function keyOf(ref: RuntimeTaskRef): string {
  return `${ref.instanceId}/${ref.vdb}/${ref.version}/${ref.taskId}`;
}

function isTerminal(state: TaskState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** A snapshot of `previous` in a new state; artifacts are appended and numbered `a1`, `a2`, ... in the task. */
function transition(previous: RuntimeSnapshot, state: TaskState, stop: { reason: StopReason; detail: string }, drafts: ArtifactDraft[] = []): RuntimeSnapshot {
  const artifacts = [...previous.artifacts, ...drafts.map((draft, index) => ({ id: `a${previous.artifacts.length + index + 1}`, ...draft }))];
  return { ...previous, state, artifacts, stop, pendingActions: [] };
}

export class ReferenceRuntime {
  private readonly tasks = new Map<string, TaskRecord>();

  constructor(private readonly maxTasks = MAX_TASKS) {}

  /** Idempotent by task: starting a known task answers its current snapshot and plans nothing new. */
  start(ref: RuntimeTaskRef, document: TaskStartDocument): RuntimeSnapshot {
    const known = this.tasks.get(keyOf(ref));
    if (known) return known.snapshot;
    if (document.taskId !== ref.taskId || document.instanceId !== ref.instanceId || document.vdb.name !== ref.vdb || document.vdb.version !== ref.version) {
      throw new InputError('invalid_request', 'the start document names another task, instance or VDB than its path');
    }
    const record = this.plan(ref, document);
    this.remember(keyOf(ref), record);
    return record.snapshot;
  }

  /** Idempotent by sequence: a sequence seen before answers the snapshot it produced. */
  advance(ref: RuntimeTaskRef, document: TaskAdvanceDocument): RuntimeSnapshot {
    const record = this.record(ref);
    if (document.taskId !== ref.taskId) throw new InputError('invalid_request', 'the advance document names another task than its path');
    const repeated = record.advances.get(document.sequence);
    if (repeated) return repeated;
    const expected = record.advances.size + 1;
    if (document.sequence !== expected) {
      throw new ConflictError('sequence_out_of_order', `advance ${document.sequence} of task ${ref.taskId} arrived, ${expected} was expected`);
    }
    const pending = record.pending;
    if (record.snapshot.state !== 'working' || !pending) {
      throw new ConflictError('task_not_working', `task ${ref.taskId} is ${record.snapshot.state}: it waits for no observation`);
    }
    const observation = document.observations.find((candidate) => candidate.actionId === pending.action.actionId);
    if (!observation) throw new InputError('invalid_request', `the advance has no observation of action ${pending.action.actionId}`);

    const query = pending.action.kind === 'query' ? queryArtifact(pending.action.sql) : semanticQueryArtifact(pending.action.query);
    if (observation.status === 'ok') {
      const answer = answerArtifact(resultAnswer(pending.subject, observation, pending.notes));
      record.snapshot = transition(record.snapshot, 'completed', { reason: 'completed', detail: '' }, [answer, ...tableArtifacts(observation), query]);
    } else {
      const reason = observation.error?.message ?? `the query was ${observation.status}`;
      const answer = answerArtifact(`The query could not run (${observation.status}${observation.error ? `, ${observation.error.code}` : ''}): ${reason}`);
      record.snapshot = transition(record.snapshot, 'failed', { reason: 'runtime_failed', detail: reason }, [answer, query]);
    }
    record.pending = undefined;
    record.advances.set(document.sequence, record.snapshot);
    return record.snapshot;
  }

  read(ref: RuntimeTaskRef): RuntimeSnapshot {
    return this.record(ref).snapshot;
  }

  /** Stops a working task; a task that already stopped keeps its snapshot. */
  cancel(ref: RuntimeTaskRef): RuntimeSnapshot {
    const record = this.record(ref);
    if (!isTerminal(record.snapshot.state)) {
      record.snapshot = transition(record.snapshot, 'cancelled', { reason: 'cancelled', detail: 'cancelled by the service' });
      record.pending = undefined;
    }
    return record.snapshot;
  }

  private plan(ref: RuntimeTaskRef, document: TaskStartDocument): TaskRecord {
    const initial: RuntimeSnapshot = {
      format: 'service-task-snapshot',
      formatVersion: 1,
      task: { taskId: ref.taskId, target: { instanceId: ref.instanceId, vdbName: ref.vdb, vdbVersion: ref.version } },
      capability: document.capability,
      state: 'working',
      artifacts: [],
      usage: { inputTokens: 0, outputTokens: 0, modelCalls: 0 },
      stop: null,
      pendingActions: [],
    };
    const stopped = (state: TaskState, reason: StopReason, detail: string, drafts: ArtifactDraft[] = []): TaskRecord =>
      ({ snapshot: transition(initial, state, { reason, detail }, drafts), pending: undefined, advances: new Map() });

    if (document.capability !== 'answer') {
      return stopped('failed', 'runtime_failed', `unknown capability "${document.capability}": the reference runtime offers answer`);
    }
    const plan = planAnswer(document.goal, document.authorizedContext);
    switch (plan.kind) {
      case 'failed':
        return stopped('failed', 'runtime_failed', plan.detail);
      case 'input_required':
        return stopped('input_required', 'input_required', plan.detail, [answerArtifact(plan.answer)]);
      case 'query': case 'semanticQuery': {
        // At least one row: a budget of none is the service's to enforce, and a pending action asks for one or more.
        const maxRows = Math.max(1, Math.min(MAX_QUERY_ROWS, document.budgets.maxObservationRows));
        const action: PendingAction = plan.kind === 'query'
          ? { actionId: QUERY_ACTION, kind: 'query', sql: plan.sql, maxRows }
          : { actionId: QUERY_ACTION, kind: 'semanticQuery', query: plan.query, maxRows };
        return { snapshot: { ...initial, pendingActions: [action] }, pending: { action, subject: plan.subject, notes: plan.notes }, advances: new Map() };
      }
    }
  }

  private record(ref: RuntimeTaskRef): TaskRecord {
    const record = this.tasks.get(keyOf(ref));
    if (!record) throw new NotFoundError('task_not_found', `no task ${ref.taskId} of instance ${ref.instanceId} on VDB ${ref.vdb} version ${ref.version}`);
    return record;
  }

  private remember(key: string, record: TaskRecord): void {
    this.tasks.set(key, record);
    // A Map iterates in insertion order: the first keys are the oldest tasks.
    for (const oldest of this.tasks.keys()) {
      if (this.tasks.size <= this.maxTasks) break;
      this.tasks.delete(oldest);
    }
  }
}
