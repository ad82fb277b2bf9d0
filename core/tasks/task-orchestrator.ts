import type { SemanticQueries } from '../semantic-query/semantic-query-service.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../plugin-api/auth-scheme.js';
import { effectiveGrants } from '../authorization/grants.js';
import type { CapabilityConfig, ServiceConfig } from '../config/config-types.js';
import type { VdbHandle, VdbHandles } from '../vdb/vdb-handles.js';
import { ConflictError, InputError, NotFoundError, PayloadTooLargeError, UnavailableError, UpstreamError } from '../plugin-api/errors.js';
import type { SemanticRegistry } from '../semantic/semantic-registry.js';
import type { VdbRegistry } from '../vdb/vdb-registry.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import type { RuntimeTaskRef, RuntimeTransport } from '../plugin-api/runtime-transport.js';
import { validateRuntimeDocument } from './runtime-documents.js';
import { raceDeadline } from './deadline.js';
import { runPendingAction } from './task-actions.js';
import { BudgetExceeded, TaskMeter } from './task-budget.js';
import { taskContext } from './task-context.js';
import type {
  Observation, RuntimeSnapshot, StopReason, TaskAdvanceDocument, TaskSnapshot, TaskStartDocument, TaskState,
} from '../plugin-api/task-documents.js';
import { readTaskRequest } from './task-request.js';
import type { TaskObserver } from './task-observer.js';

export interface TaskCall {
  capability: string;
  vdb: string;
  /** Absent on the versionless route: the one loaded version of that name. */
  version: string | undefined;
  body: unknown;
  caller: Principal;
}

export interface TaskOrchestratorDeps {
  config: ServiceConfig;
  vdbs: VdbRegistry;
  handles: VdbHandles;
  semantic: SemanticRegistry;
  /** Compiles and runs the `semanticQuery` actions runtimes propose. */
  semanticQueries: SemanticQueries;
  /** Absent when `runtime.enabled` is false. */
  transport: RuntimeTransport | undefined;
  logger: Logger;
  observer?: TaskObserver;
}

const NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** While a runtime says `working` without asking anything, it is read again after these pauses. */
const IDLE_PAUSES_MS = [50, 100, 200, 400, 800, 1000];

/**
 * Runs one synchronous task (docs/tasks.md): selects the VDB, derives the caller's
 * authorized context, starts the runtime task, then runs each round of pending actions as the caller and
 * advances the task with the observations, until a terminal snapshot, a budget or the deadline. The task
 * goes on when the client disconnects: nothing here listens to the HTTP request. When the task ends (its
 * deadline, a budget, or a terminal snapshot) a statement of its still running is cancelled.
 */
export class TaskOrchestrator {
  constructor(private readonly deps: TaskOrchestratorDeps) {}

  async run(call: TaskCall): Promise<TaskSnapshot> {
    const request = readTaskRequest(call.body);
    const capability = this.capability(call.capability);
    const transport = this.deps.transport;
    if (!transport) throw new UnavailableError('runtime_disabled', 'the agent runtime is disabled in this deployment (runtime.enabled: false)');
    const handle = this.handleOf(call.vdb, call.version);
    await this.ensureReachable(handle);

    const { config } = this.deps;
    const taskId = randomUUID();
    const ref: RuntimeTaskRef = { instanceId: config.instanceId, vdb: handle.vdb.name, version: handle.vdb.version, taskId };
    const semanticPackage = this.deps.semantic.packageOf(handle.vdb.name, handle.vdb.version);
    const start: TaskStartDocument = {
      format: 'service-task-start',
      formatVersion: 1,
      taskId,
      instanceId: config.instanceId,
      capability: capability.name,
      vdb: { name: handle.vdb.name, version: handle.vdb.version },
      goal: request.goal,
      externalContextId: request.externalContextId,
      externalContext: request.externalContext === null ? null : { contentType: 'application/json', data: request.externalContext },
      artifactIds: request.artifactIds,
      authorizedContext: taskContext({ vdb: handle.vdb, sqlFamily: handle.dialect.family, semanticPackage }, effectiveGrants(handle.vdb, call.caller)),
      budgets: capability.budgets,
    };
    return new TaskRun(ref, capability, handle, call.caller, transport, this.deps).execute(start);
  }

  private capability(name: string): CapabilityConfig {
    const capability = this.deps.config.capabilities.find((candidate) => candidate.name === name);
    if (!capability) {
      throw new InputError('unknown_capability', `unknown capability "${name}" (this service offers ${this.deps.config.capabilities.map((known) => known.name).join(', ')})`);
    }
    return capability;
  }

  private handleOf(name: string, version: string | undefined): VdbHandle {
    if (!NAME.test(name) || (version !== undefined && !NAME.test(version))) throw new InputError('invalid_vdb', 'the VDB name and version are 1-128 letters, digits, _ . or -');
    let vdb: VirtualDatabase | undefined;
    if (version === undefined) {
      const versions = this.deps.vdbs.versionsOf(name);
      if (versions.length > 1) {
        throw new ConflictError('ambiguous_vdb_version', `VDB ${name} has ${versions.length} active versions (${versions.map((candidate) => candidate.version).join(', ')}): use the versioned route`);
      }
      vdb = versions[0];
    } else {
      vdb = this.deps.vdbs.find(name, version);
    }
    if (!vdb) throw new NotFoundError('vdb_not_found', version === undefined ? `VDB ${name} is not active` : `VDB ${name} version ${version} is not active`);
    const handle = this.deps.handles.lookup(vdb.name, vdb.version);
    if (typeof handle === 'string') throw new NotFoundError('vdb_not_found', handle);
    return handle;
  }

  /** The data context must be servable: a datasource that does not answer is 503 `context_unavailable`. */
  private async ensureReachable(handle: VdbHandle): Promise<void> {
    try {
      await handle.datasource.ping();
    } catch (error) {
      throw new UnavailableError('context_unavailable', `the data of VDB ${handle.vdb.name} version ${handle.vdb.version} cannot be reached now`, { cause: error });
    }
  }
}

/** One task from start to its terminal snapshot. */
class TaskRun {
  private readonly meter: TaskMeter;
  private readonly deadline: number;
  /** Aborted when the task has ended: its statements still running are cancelled on the server. */
  private readonly ended = new AbortController();
  private sequence = 0;

  constructor(
    private readonly ref: RuntimeTaskRef,
    private readonly capability: CapabilityConfig,
    private readonly handle: VdbHandle,
    private readonly caller: Principal,
    private readonly transport: RuntimeTransport,
    private readonly deps: TaskOrchestratorDeps,
  ) {
    this.meter = new TaskMeter(capability.budgets);
    this.deadline = Date.now() + capability.budgets.maxDurationSeconds * 1000;
  }

  async execute(start: TaskStartDocument): Promise<TaskSnapshot> {
    this.checkSize(start);
    let last: RuntimeSnapshot | undefined;
    const atDeadline = setTimeout(() => this.ended.abort(), Math.max(0, this.deadline - Date.now()));
    try {
      let snapshot = await this.call(() => this.transport.start(this.ref, start));
      last = snapshot;
      let idle = 0;
      while (snapshot.state === 'working') {
        this.meter.runtimeReported(snapshot.usage);
        if (snapshot.pendingActions.length === 0) {
          await pause(IDLE_PAUSES_MS[Math.min(idle++, IDLE_PAUSES_MS.length - 1)] as number);
          snapshot = last = await this.call(() => this.transport.read(this.ref));
          continue;
        }
        idle = 0;
        this.meter.step();
        const advance = await this.observe(snapshot);
        this.checkSize(advance);
        snapshot = last = await this.call(() => this.transport.advance(this.ref, advance));
      }
      this.meter.runtimeReported(snapshot.usage);
      return this.terminal(snapshot);
    } catch (error) {
      if (!(error instanceof BudgetExceeded)) throw error;
      return this.stopForBudget(error, last);
    } finally {
      clearTimeout(atDeadline);
      this.ended.abort();
    }
  }

  /** Runs the round's actions in order and builds the advance document. */
  private async observe(snapshot: RuntimeSnapshot): Promise<TaskAdvanceDocument> {
    const observations: Observation[] = [];
    for (const action of snapshot.pendingActions) {
      this.meter.serviceAction();
      const rowsLeft = this.meter.rowsLeft();
      const maxRows = Math.min(action.maxRows, rowsLeft);
      const bytesLeft = this.meter.bytesLeft();
      const observation = await this.beforeDeadline(runPendingAction(action, this.handle, this.caller, {
        maxRows,
        maxBytes: bytesLeft,
        maxRowBytes: this.capability.budgets.maxObservationBytes,
        signal: this.ended.signal,
      }, this.deps.semanticQueries));
      // the deadline ended the task while the statement ran, and the statement's cancellation answered first
      if (this.ended.signal.aborted) throw this.deadlineExceeded();
      this.meter.observed(observation.rowCount, observation.status === 'ok' ? Buffer.byteLength(JSON.stringify(observation.rows)) : 0);
      // cut short by the row budget rather than by the runtime's own maxRows: more rows were wanted than
      // allowed (a cut by the byte budget keeps fewer than maxRows rows, and goes back as a truncated observation)
      if (observation.truncated && observation.rowCount === maxRows && rowsLeft < action.maxRows) {
        throw new BudgetExceeded('maxObservationRows', `maxObservationRows: action ${action.actionId} needed more than the ${rowsLeft} rows left of ${this.capability.budgets.maxObservationRows}`);
      }
      // the byte budget left no room for a single row: the task has observed all it may
      if (observation.truncated && observation.rowCount === 0 && maxRows > 0) {
        throw new BudgetExceeded('maxObservationBytes', `maxObservationBytes: action ${action.actionId} found no room for a row in the ${bytesLeft} bytes left of ${this.capability.budgets.maxObservationBytes}`);
      }
      observations.push(observation);
    }
    this.sequence += 1;
    return { format: 'service-task-advance', formatVersion: 1, taskId: this.ref.taskId, sequence: this.sequence, observations };
  }

  /** A transport call, raced against the deadline, its answer checked against the snapshot schema. */
  private async call(operation: () => Promise<RuntimeSnapshot>): Promise<RuntimeSnapshot> {
    return checkedSnapshot(await this.beforeDeadline(operation()), this.ref.taskId);
  }

  private beforeDeadline<T>(work: Promise<T>): Promise<T> {
    return raceDeadline(work, this.deadline - Date.now(), () => this.deadlineExceeded());
  }

  private deadlineExceeded(): BudgetExceeded {
    return new BudgetExceeded('deadline', `maxDurationSeconds: the task ran longer than ${this.capability.budgets.maxDurationSeconds} s`);
  }

  /** A runtime document larger than the transport limit is refused before it is sent. */
  private checkSize(document: TaskStartDocument | TaskAdvanceDocument): void {
    const bytes = Buffer.byteLength(JSON.stringify(document));
    const limit = this.deps.config.runtime.transportLimitBytes;
    if (bytes > limit) {
      throw new PayloadTooLargeError('request_too_large', `the ${document.format} document is ${bytes} bytes, over the runtime transport limit of ${limit}`);
    }
  }

  private terminal(snapshot: RuntimeSnapshot): TaskSnapshot {
    this.deps.observer?.taskEnded(this.capability.name, snapshot.state);
    return {
      format: 'service-task-snapshot',
      formatVersion: 1,
      task: snapshot.task,
      capability: this.capability.name,
      state: snapshot.state,
      artifacts: snapshot.artifacts,
      usage: this.meter.usage,
      stop: snapshot.stop ?? { reason: defaultStopReason(snapshot.state), detail: '' },
    };
  }

  /** Cancels the runtime task and answers `budget_exceeded` naming the budget (or the deadline). */
  private async stopForBudget(exceeded: BudgetExceeded, last: RuntimeSnapshot | undefined): Promise<TaskSnapshot> {
    this.deps.observer?.taskEnded(this.capability.name, 'budget_exceeded', exceeded.budget);
    let cancelled = last;
    try {
      cancelled = checkedSnapshot(await this.transport.cancel(this.ref), this.ref.taskId);
    } catch (error) {
      this.deps.logger.warn({ taskId: this.ref.taskId, err: error }, 'the runtime task could not be cancelled after its budget ran out');
    }
    return {
      format: 'service-task-snapshot',
      formatVersion: 1,
      task: { taskId: this.ref.taskId, target: { instanceId: this.ref.instanceId, vdbName: this.ref.vdb, vdbVersion: this.ref.version } },
      capability: this.capability.name,
      state: 'budget_exceeded',
      artifacts: cancelled?.artifacts ?? [],
      usage: this.meter.usage,
      stop: { reason: exceeded.budget === 'deadline' ? 'deadline_exceeded' : 'budget_exceeded', detail: exceeded.message },
    };
  }
}

/** A runtime answer must be a valid snapshot of this task; anything else is 502 `runtime_protocol_error`. */
function checkedSnapshot(snapshot: RuntimeSnapshot, taskId: string): RuntimeSnapshot {
  const problems = validateRuntimeDocument('service-task-snapshot', snapshot);
  if (problems.length > 0) throw new UpstreamError('runtime_protocol_error', `the runtime answered an invalid snapshot: ${problems.slice(0, 3).join('; ')}`);
  if (snapshot.task.taskId !== taskId) throw new UpstreamError('runtime_protocol_error', `the runtime answered a snapshot of another task (${snapshot.task.taskId})`);
  // a working snapshot may leave out `stop` and `pendingActions` (the schema requires `stop` once stopped)
  return { ...snapshot, stop: snapshot.stop ?? null, pendingActions: snapshot.pendingActions ?? [] };
}

function defaultStopReason(state: TaskState): StopReason {
  switch (state) {
    case 'failed': return 'runtime_failed';
    case 'working': return 'runtime_failed';
    default: return state;
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
