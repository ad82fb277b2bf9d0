// uvu as the test files see it in the test worker (scripts/uvu-hooks.mjs): the same suites, whose hooks print
// their error before uvu drops it, so that a suite that could not start says why.
import * as uvu from 'uvu';

export * from 'uvu';

/** `register` (a suite's `before`, `after`, …) registering handlers that print what they threw, then throw it. */
function printing(register, kind) {
  return (handler) => register(async (state) => {
    try {
      await handler(state);
    } catch (error) {
      console.log(`\n   ✘ the ${kind} hook of "${state.__suite__}" threw: ${error?.stack ?? error}\n`);
      throw error;
    }
  });
}

function reported(test) {
  const before = printing(test.before, 'before');
  before.each = printing(test.before.each, 'before.each');
  const after = printing(test.after, 'after');
  after.each = printing(test.after.each, 'after.each');
  test.before = before;
  test.after = after;
  return test;
}

export const suite = (...args) => reported(uvu.suite(...args));
export const test = reported(uvu.test);
