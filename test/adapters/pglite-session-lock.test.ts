import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionLock } from '../../adapters/pglite/session-lock.js';

const tick = () => new Promise((done) => setTimeout(done, 5));

test('shared calls run together; an exclusive call waits for them and holds back the ones after it', async () => {
  const lock = new SessionLock();
  const events: string[] = [];
  const call = (name: string) => async () => {
    events.push(`${name} start`);
    await tick();
    events.push(`${name} end`);
  };
  const first = lock.shared(call('a'));
  const second = lock.shared(call('b'));
  const alone = lock.exclusive(call('restrict'));
  const after = lock.shared(call('c'));
  await Promise.all([first, second, alone, after]);
  assert.equal(events, ['a start', 'b start', 'a end', 'b end', 'restrict start', 'restrict end', 'c start', 'c end']);
});

test('a failed call releases the lock', async () => {
  const lock = new SessionLock();
  await lock.exclusive(async () => {
    throw new Error('reopen failed');
  }).catch(() => undefined);
  await lock.shared(async () => {
    throw new Error('statement failed');
  }).catch(() => undefined);
  assert.is(await lock.exclusive(async () => 'ran'), 'ran');
  assert.is(await lock.shared(async () => 'ran'), 'ran');
});

test.run();
