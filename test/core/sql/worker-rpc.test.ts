import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WorkerRpc, type WireError, type WorkerRpcErrors } from '../../../core/sql/worker-rpc.js';
import type { FixtureAnswers, FixtureCommand } from '../../fixtures/worker-rpc-module.js';

/**
 * The one worker RPC of the PGlite adapter and the catalog mirrors (core/sql/worker-rpc.ts), on real worker
 * threads running test/fixtures/worker-rpc-module.ts: order, errors, deadlines, aborts, a real WebAssembly
 * trap and a thread that exits.
 */

class RpcError extends Error {
  constructor(readonly kind: string, message = kind, readonly fields: WireError['fields'] = {}) {
    super(message);
  }
}

const errors: WorkerRpcErrors = {
  canceled: (reason) => new RpcError('canceled', reason),
  stopped: () => new RpcError('stopped'),
  failed: () => new RpcError('failed'),
  cutOff: () => new RpcError('cut off'),
  fromWire: (wire) => new RpcError(`wire ${wire.name}`, wire.message, wire.fields),
  unsendable: () => new RpcError('unsendable'),
};

function open(abortGraceMs = 0): WorkerRpc<FixtureCommand, FixtureAnswers> {
  return new WorkerRpc({ module: new URL('../../fixtures/worker-rpc-module.js', import.meta.url), name: 'worker-rpc test', errors, abortGraceMs });
}

const soon = () => ({ deadline: Date.now() + 60_000 });

/** What a request settled with: its value, or the kind of its error. */
async function outcome(request: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await request };
  } catch (error) {
    return error instanceof RpcError ? error.kind : error;
  }
}

test('requests sent together answer in the order sent, an error with its fields', async () => {
  const rpc = open();
  try {
    const answers = await Promise.all([
      outcome(rpc.request({ kind: 'echo', value: 1n }, soon())),
      rpc.request({ kind: 'fail', code: '42P01' }, soon()).catch((error: RpcError) => [error.kind, error.fields['code'], error.fields['detail']]),
      outcome(rpc.request({ kind: 'echo', value: { bytes: new Uint8Array([1, 2]) } }, soon())),
    ]);
    assert.equal(answers, [{ value: 1n }, ['wire Error', '42P01', 'as asked'], { value: { bytes: new Uint8Array([1, 2]) } }]);
    assert.is(rpc.stopped, false, 'an error the worker answered with leaves it running');
  } finally {
    await rpc.terminate();
  }
});

test('a request past its deadline ends the worker with 57014; the ones sent behind it are cut off', async () => {
  const rpc = open();
  const spinning = outcome(rpc.request({ kind: 'spin', ms: 20_000 }, { deadline: Date.now() + 300 }));
  const behind = outcome(rpc.request({ kind: 'echo', value: 'after' }, soon()));
  assert.equal(await Promise.all([spinning, behind]), ['canceled', 'cut off']);
  assert.is(rpc.stopped, true);
  assert.is(await outcome(rpc.request({ kind: 'echo', value: 'later' }, soon())), 'stopped', 'a stopped worker takes nothing more');
  await rpc.terminate();
});

test('an aborted request ends the worker once its grace is over; a request aborted before it was sent is refused', async () => {
  const rpc = open(100);
  const controller = new AbortController();
  const spinning = outcome(rpc.request({ kind: 'spin', ms: 20_000 }, { deadline: Date.now() + 60_000, signal: controller.signal }));
  controller.abort();
  assert.is(await spinning, 'canceled');
  assert.is(rpc.stopped, true);
  const other = open();
  try {
    assert.is(await outcome(other.request({ kind: 'echo', value: 1 }, { deadline: Date.now() + 60_000, signal: controller.signal })), 'canceled');
    assert.is(other.stopped, false);
  } finally {
    await Promise.all([rpc.terminate(), other.terminate()]);
  }
});

test('a WebAssembly trap fails its request, stops the RPC at once, and the requests behind it are cut off to be sent again', async () => {
  const rpc = open();
  const trapped = rpc.request({ kind: 'trap' }, soon()).then(() => 'answered', (error: RpcError) => ({ kind: error.kind, stoppedThen: rpc.stopped }));
  const behind = outcome(rpc.request({ kind: 'echo', value: 'after' }, soon()));
  assert.equal(await Promise.all([trapped, behind]), [{ kind: 'wire RuntimeError', stoppedThen: true }, 'cut off']);
  await rpc.terminate();
});

test('a worker that exits fails the request running as stopped and cuts off the ones behind it', async () => {
  const rpc = open();
  const exiting = outcome(rpc.request({ kind: 'exit' }, soon()));
  const behind = outcome(rpc.request({ kind: 'echo', value: 'after' }, soon()));
  assert.equal(await Promise.all([exiting, behind]), ['stopped', 'cut off']);
  assert.is(rpc.stopped, true);
  await rpc.terminate();
});

test('an answer or a command structured clone cannot carry fails as an error, not at its time limit', async () => {
  const rpc = open();
  try {
    assert.is(await outcome(rpc.request({ kind: 'unclonable' }, soon())), 'wire DataCloneError');
    assert.is(await outcome(rpc.request({ kind: 'echo', value: () => undefined }, soon())), 'unsendable');
    assert.equal(await outcome(rpc.request({ kind: 'echo', value: 'still here' }, soon())), { value: 'still here' });
  } finally {
    await rpc.terminate();
  }
});

test.run();
