import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { offAbort, onAbort } from '../../../core/sql/abort-listeners.js';

test('each callback still waiting is called once, in the order they came, when the signal aborts', () => {
  const controller = new AbortController();
  const calls: string[] = [];
  const first = () => calls.push('first');
  const ended = () => calls.push('ended');
  const second = () => calls.push('second');
  onAbort(controller.signal, first);
  onAbort(controller.signal, ended);
  onAbort(controller.signal, second);
  offAbort(controller.signal, ended);
  controller.abort();
  controller.abort();
  assert.equal(calls, ['first', 'second']);
});

test('a signal serves one statement after another: only the one waiting when it aborts is called', () => {
  const controller = new AbortController();
  const calls: number[] = [];
  for (let statement = 1; statement <= 3; statement += 1) {
    const cancel = () => calls.push(statement);
    onAbort(controller.signal, cancel);
    if (statement < 3) offAbort(controller.signal, cancel);
  }
  controller.abort();
  assert.equal(calls, [3]);
});

test('a callback that throws does not keep the others from running; its error is reported as uncaught', async () => {
  const controller = new AbortController();
  const calls: string[] = [];
  const reported = new Promise<unknown>((resolve) => process.once('uncaughtException', resolve));
  onAbort(controller.signal, () => {
    throw new Error('broken callback');
  });
  onAbort(controller.signal, () => calls.push('after'));
  controller.abort();
  assert.equal(calls, ['after']);
  assert.is(((await reported) as Error).message, 'broken callback');
});

test('as with addEventListener, a signal that has already aborted calls nothing', () => {
  const calls: string[] = [];
  onAbort(AbortSignal.abort(), () => calls.push('late'));
  assert.equal(calls, []);
});

test.run();
