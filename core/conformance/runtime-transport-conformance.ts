import assert from 'node:assert/strict';
import { ServiceError, UnavailableError } from '../plugin-api/errors.js';
import type { RuntimeSettings, RuntimeTaskRef, RuntimeTransport } from '../plugin-api/runtime-transport.js';
import { TERMINAL_STATES, type RuntimeSnapshot, type TaskStartDocument } from '../plugin-api/task-documents.js';
import { validateRuntimeDocument } from '../tasks/runtime-documents.js';
import { loadContribution, type ConformanceCase, type LoadedContribution } from './conformance-case.js';

/** What the runtime transport suite runs against. */
export interface RuntimeTransportConformanceTarget {
  /** The folder holding the plugin's plugin.json, beside its built entry. */
  plugin: string;
  /** The `config` of its `plugins` entry, checked against its configSchema. */
  config?: Record<string, unknown>;
  /** The service's `runtime` settings, pointing at a runtime that answers. */
  settings: RuntimeSettings;
  /**
   * A task the runtime accepts. The suite starts several, each under `taskId` with a suffix (`-life`,
   * `-twice`, …), so the id must be new to the runtime.
   */
  task: { ref: RuntimeTaskRef; document: TaskStartDocument };
  /** Settings of a runtime that does not answer; absent for a transport without a network (in process). */
  unreachable?: RuntimeSettings;
}

function snapshotOf(ref: RuntimeTaskRef, snapshot: RuntimeSnapshot): RuntimeSnapshot {
  assert.deepEqual(validateRuntimeDocument('service-task-snapshot', snapshot), [], 'a valid service-task-snapshot');
  assert.equal(snapshot.task.taskId, ref.taskId);
  return snapshot;
}

const terminal = (snapshot: RuntimeSnapshot) => (TERMINAL_STATES as readonly string[]).includes(snapshot.state);

/**
 * The conformance suite of `runtimeTransport` plugins: the plugin loads as the service loads it; its
 * factory creates a transport of the four operations; each answers a valid snapshot of the task asked for;
 * start is idempotent by task id; cancel ends the task; a runtime that does not answer is a 503
 * `runtime_unavailable`; close frees the transport.
 */
export function runtimeTransportConformance(target: RuntimeTransportConformanceTarget): ConformanceCase[] {
  let loading: Promise<LoadedContribution<'runtimeTransport'>> | undefined;
  const loaded = () => (loading ??= loadContribution('runtimeTransport', target.plugin, target.config));
  const transports: RuntimeTransport[] = [];
  const transport = async (settings = target.settings) => {
    const created = (await loaded()).contribution.create(settings);
    transports.push(created);
    return created;
  };
  const task = (suffix: string) => {
    const ref = { ...target.task.ref, taskId: `${target.task.ref.taskId}-${suffix}` };
    return { ref, document: { ...target.task.document, taskId: ref.taskId } };
  };

  const cases: ConformanceCase[] = [
    { name: 'loads through the service loader as a runtimeTransport, whose factory creates the four operations', run: async () => {
      const created = await transport();
      for (const operation of ['start', 'advance', 'read', 'cancel'] as const) assert.equal(typeof created[operation], 'function', operation);
    } },
    { name: 'start, read and cancel answer valid snapshots of the task; cancel ends it', run: async () => {
      const live = await transport();
      const { ref, document } = task('life');
      snapshotOf(ref, await live.start(ref, document));
      snapshotOf(ref, await live.read(ref));
      const cancelled = snapshotOf(ref, await live.cancel(ref));
      assert.ok(terminal(cancelled), `state after cancel: ${cancelled.state}`);
      assert.ok(terminal(snapshotOf(ref, await live.read(ref))), 'a read after cancel is terminal');
    } },
    { name: 'start is idempotent by task id: a second start answers the same task', run: async () => {
      const live = await transport();
      const { ref, document } = task('twice');
      const first = snapshotOf(ref, await live.start(ref, document));
      const second = snapshotOf(ref, await live.start(ref, document));
      assert.equal(second.task.taskId, first.task.taskId);
      assert.equal(second.capability, first.capability);
      await live.cancel(ref);
    } },
    { name: 'tasks are kept apart: reading one answers that one', run: async () => {
      const live = await transport();
      const [one, two] = [task('one'), task('two')];
      await Promise.all([live.start(one.ref, one.document), live.start(two.ref, two.document)]);
      snapshotOf(two.ref, await live.read(two.ref));
      snapshotOf(one.ref, await live.read(one.ref));
      await Promise.all([live.cancel(one.ref), live.cancel(two.ref)]);
    } },
  ];
  if (target.unreachable) {
    const unreachable = target.unreachable;
    cases.push({ name: 'a runtime that does not answer is UnavailableError runtime_unavailable (503)', run: async () => {
      const { ref, document } = task('down');
      try {
        await (await transport(unreachable)).start(ref, document);
      } catch (error) {
        assert.ok(error instanceof ServiceError, `expected a ServiceError, got ${String(error)}`);
        assert.ok(error instanceof UnavailableError && error.code === 'runtime_unavailable', `${error.name} ${error.code}`);
        return;
      }
      assert.fail('a start against a runtime that does not answer succeeded');
    } });
  }
  cases.push({ name: 'close frees every transport the suite created', run: async () => {
    for (const created of transports.splice(0)) await created.close?.();
  } });
  return cases;
}
