import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const FIXTURES = 'test/fixtures/test-runner';

/** scripts/run-tests.mjs on the fixture files matching `pattern`, as `npm test` runs it: its exit code and output. */
function runTests(pattern: string, env: Record<string, string> = {}): { status: number | null; output: string } {
  const run = spawnSync(process.execPath, ['scripts/run-tests.mjs', pattern], {
    encoding: 'utf8',
    env: { ...process.env, VDB_TEST_SOURCES: FIXTURES, VDB_TEST_WORKERS: '1', ...env },
  });
  return { status: run.status, output: run.stdout + run.stderr };
}

/** Whether the process is gone: no such pid, or a zombie waiting to be reaped (it runs nothing). */
function gone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').startsWith('Z');
  } catch {
    return true;
  }
}

const test = suite('scripts/run-tests.mjs: jobs and workers');

test('a file of one family gets a job per backend of that family, none for the others', () => {
  const { status, output } = runTests('postgres-family', { VDB_TEST_MYSQL_URL: 'mysql://root@127.0.0.1:1/unused' });
  assert.is(status, 0, output);
  assert.ok(output.includes('postgres-family.test.js#pglite'), output);
  assert.ok(output.includes('postgres-family.test.js#postgres'), output);
  assert.not.ok(output.includes('#mysql'), output);
  assert.match(output, /^2 passed, 0 failed$/m);
});

/** Whether the process is gone within a few seconds: a SIGKILL is delivered, not done, when kill() returns. */
async function goneSoon(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 50 && !gone(pid); attempt += 1) await new Promise((done) => setTimeout(done, 100));
  return gone(pid);
}

test('a worker that dies leaves nothing it started running, and its file counts as failed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vdb-runner-'));
  try {
    const pidFile = join(dir, 'child.pid');
    const { status, output } = runTests('crashing-worker', { VDB_TEST_RUNNER_PID_FILE: pidFile });
    assert.is(status, 1, output);
    assert.match(output, /its worker process ended with SIGKILL/);
    assert.match(output, /^0 passed, 1 failed$/m);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(pid > 0);
    assert.ok(await goneSoon(pid), `the child ${pid} the crashed worker started is still running`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
