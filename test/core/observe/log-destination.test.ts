import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, logDestination } from '../../../core/logging.js';

const batched = suite('batched log destination');
let dir = '';

batched.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'vdb-logs-'));
});
batched.after(() => rmSync(dir, { recursive: true, force: true }));

const linesOf = (file: string): { msg: string; n?: number }[] => readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));

batched('a few lines wait; flushSync writes them in order', () => {
  const file = join(dir, 'few.log');
  const destination = logDestination(file, { batched: true });
  const logger = createLogger('info', destination);
  logger.info('one');
  logger.info('two');
  assert.equal(linesOf(file), [], 'nothing is written below the batch size');
  destination.flushSync();
  assert.equal(linesOf(file).map((line) => line.msg), ['one', 'two']);
});

batched('a full batch is written at once, every line whole', () => {
  const file = join(dir, 'full.log');
  const logger = createLogger('info', logDestination(file, { batched: true }));
  for (let n = 0; n < 100; n++) logger.info({ n }, 'line');
  const written = linesOf(file);
  assert.ok(written.length >= 30, `${written.length} lines written`);
  assert.equal(written.map((line) => line.n), [...Array(written.length).keys()]);
});

batched('what waits is written within the flush period', async () => {
  const file = join(dir, 'timed.log');
  createLogger('info', logDestination(file, { batched: true })).info('later');
  await sleep(600);
  assert.equal(linesOf(file).map((line) => line.msg), ['later']);
});

batched.run();
