// Runs the uvu suites on the compiled tests in several worker processes and closes with the line CI reads:
// `N passed, N failed[, N skipped]`. The counts are read from uvu's summary of each file, never computed by hand;
// a file that prints no summary (it could not load, or its process died) counts as one failed test.
//
// Usage: node scripts/run-tests.mjs [pattern]
//   pattern: a case-insensitive regex on the job names below (default: every job)
//   VDB_TEST_WORKERS=N: N worker processes (default: os.availableParallelism()); 1 runs every file in one process
//   VDB_TEST_SOURCES=dir: the folder of test sources (default: test, less test/fixtures)
//
// A job is one test file (`core/caching/lru-cache.test.js`) or, for a file that registers its suites with
// forEachBackend (test/support/backends.ts), one backend of it (`core/endpoints/endpoints.test.js#postgres`):
// each backend of the families its call names as a literal list (`forEachBackend(register, ['postgres'])`),
// or every backend. Each worker runs one job at a time and keeps its process between jobs; a job's output is
// printed whole, when it ends. A worker is the leader of a process group of its own: when it ends, whatever it
// left running (a server a test spawned, a crashed test's children) is killed with it. Jobs that share a lane
// never run at the same time:
//   - `postgres-server`, `mysql-server`: every job on the server of VDB_TEST_POSTGRES_URL / VDB_TEST_MYSQL_URL
//     (found in the file's source, or the backend's); their suites share the test database, its schemas and
//     the server's roles;
//   - any lane a test file names in a line `// test-lane: <lane>[, <lane>]` (`soak`: suites that measure memory, load
//     the machine or start their own database servers, one at a time).
import { fork } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What scripts/test-worker.mjs writes on a line of its own after each file. */
const END_MARK = '\u0000vdb-test-file-done\u0000';
/** How long each job took last time on this build, to start the longest first. */
const TIMES_FILE = 'dist/.test-times.json';

const started = Date.now();
const pattern = new RegExp(process.argv[2] ?? '', 'i');
const workerCount = Math.max(1, Number(process.env['VDB_TEST_WORKERS'] ?? availableParallelism()));

const sourceRoot = process.env['VDB_TEST_SOURCES'] ?? 'test';

/** Every test source under the root, as its compiled file: a compiled test whose source is gone does not run. */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    // fixtures are what tests run, not suites of their own
    if (entry.isDirectory()) return path === join(sourceRoot, 'fixtures') ? [] : sources(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const serverLanes = [
  { variable: 'VDB_TEST_POSTGRES_URL', lane: 'postgres-server' },
  { variable: 'VDB_TEST_MYSQL_URL', lane: 'mysql-server' },
];

/** The families a forEachBackend call names (`forEachBackend(register, ['postgres'])`); undefined for all. */
function familiesOf(text) {
  return /\bforEachBackend\([\s\S]*?,\s*\[((?:\s*'\w+'\s*,?)+)\]\s*\)/.exec(text)?.[1].match(/\w+/g) ?? undefined;
}

let backends;
const jobs = [];
for (const source of sources(sourceRoot).sort()) {
  const text = readFileSync(source, 'utf8');
  const name = relative(sourceRoot, source).replace(/\.ts$/, '.js');
  const file = join('dist', source.replace(/\.ts$/, '.js'));
  const named = /^\/\/ test-lane: ([\w-]+(?:, [\w-]+)*)/m.exec(text)?.[1].split(', ') ?? [];
  if (/\bforEachBackend\(/.test(text)) {
    backends ??= (await import(pathToFileURL('dist/test/support/backends.js').href)).BACKENDS;
    const families = familiesOf(text);
    for (const backend of backends.filter(({ family }) => families === undefined || families.includes(family))) {
      jobs.push({ name: `${name}#${backend.name}`, file, backend: backend.name, lanes: [...named, ...(backend.lane ? [backend.lane] : [])] });
    }
  } else {
    const servers = serverLanes.filter(({ variable }) => text.includes(variable) && process.env[variable]).map(({ lane }) => lane);
    jobs.push({ name, file, backend: undefined, lanes: [...named, ...servers] });
  }
}
const selected = jobs.filter((job) => pattern.test(job.name));

const lastTimes = existsSync(TIMES_FILE) ? JSON.parse(readFileSync(TIMES_FILE, 'utf8')) : {};
// Longest first, as last time; without a record, a job of a lane first (a lane runs its jobs one after another).
const expected = (job) => lastTimes[job.name] ?? (job.lanes.length > 0 ? 60_000 : 5_000);
const queue = [...selected].sort((a, b) => expected(b) - expected(a));

const totals = { passed: 0, failed: 0, skipped: 0 };
const times = {};
const busyLanes = new Set();

function count(output, label) {
  const match = new RegExp(`^\\s*${label}:\\s+(\\d+)\\s*$`, 'm').exec(output);
  return match ? Number(match[1]) : undefined;
}

/** Prints a job's output and adds uvu's counts of it (a job without uvu's summary is one failed test). */
function report(job, output, ms, ending) {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const total = count(plain, 'Total');
  const passed = count(plain, 'Passed');
  const skipped = count(plain, 'Skipped') ?? 0;
  times[job.name] = ms;
  if (total === undefined || passed === undefined) {
    totals.failed += 1;
    process.stdout.write(`${plain.trimEnd()}\n  ✘ ${job.name}: no summary from uvu (${ending}): counted as 1 failed\n\n`);
    return;
  }
  // uvu counts a test whose suite hook threw as not passed without failing the run: count it as failed.
  const failed = total - passed;
  totals.passed += passed;
  totals.failed += failed;
  totals.skipped += skipped;
  // uvu's own summary block is replaced by one line with the same counts
  const body = plain.replace(/\n\s*Total:[\s\S]*?Duration:[^\n]*\n/, '\n').trimEnd();
  process.stdout.write(`${body}\n  ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${(ms / 1000).toFixed(1)} s\n\n`);
}

/** A worker process; `done` resolves when it has ended. */
function startWorker() {
  const child = fork('scripts/test-worker.mjs', [], {
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, FORCE_COLOR: '0' },
    // its own process group, so that it can be ended with everything it started
    detached: true,
  });
  const worker = { child, job: undefined, output: '', jobStarted: 0 };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    worker.output += chunk;
    const end = worker.output.indexOf(END_MARK);
    if (end === -1 || worker.job === undefined) return;
    const job = worker.job;
    finish(worker, job, worker.output.slice(0, end), 'ended');
    worker.output = worker.output.slice(end + END_MARK.length).replace(/^\n/, '');
    idle.add(worker);
    schedule();
  });
  // a worker writes its tests' stderr to stdout; what is left (the runtime's own messages) passes through
  child.stderr.pipe(process.stderr);
  child.once('message', () => {
    idle.add(worker);
    schedule();
  });
  child.on('exit', (code, signal) => {
    endGroup(child);
    workers.delete(worker);
    idle.delete(worker);
    if (worker.job !== undefined) {
      finish(worker, worker.job, worker.output, `its worker process ended with ${signal ?? `code ${code}`}`);
      // the other jobs go on in a new process
      if (queue.length > 0) workers.add(startWorker());
      schedule();
    }
    if (workers.size === 0) close();
  });
  return worker;
}

/** Kills what is left of a worker's process group: the children of a test that did not end them. */
function endGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (error) {
    // ESRCH: nothing was left
    if (error.code !== 'ESRCH') throw error;
  }
}

function finish(worker, job, output, ending) {
  worker.job = undefined;
  for (const lane of job.lanes) busyLanes.delete(lane);
  report(job, output, Date.now() - worker.jobStarted, ending);
}

/** Gives each idle worker the next job whose lanes are free; ends the workers once nothing is left to do. */
function schedule() {
  for (const worker of [...idle]) {
    if (queue.length === 0) {
      idle.delete(worker);
      worker.child.send('exit');
      continue;
    }
    const index = queue.findIndex((job) => job.lanes.every((lane) => !busyLanes.has(lane)));
    if (index === -1) return;
    const [job] = queue.splice(index, 1);
    idle.delete(worker);
    for (const lane of job.lanes) busyLanes.add(lane);
    worker.job = job;
    worker.jobStarted = Date.now();
    worker.child.send({ file: job.file, name: job.name, backend: job.backend });
  }
}

function close() {
  const record = { ...lastTimes, ...times };
  if (existsSync('dist')) writeFileSync(TIMES_FILE, JSON.stringify(record, null, 1));
  const slowest = Object.entries(times).sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(`${selected.length} jobs in ${Math.min(workerCount, selected.length)} worker processes: ${((Date.now() - started) / 1000).toFixed(1)} s; the slowest: `
    + slowest.map(([name, ms]) => `${name} ${(ms / 1000).toFixed(1)} s`).join(', '));
  const { passed, failed, skipped } = totals;
  console.log(`${passed} passed, ${failed} failed` + (skipped > 0 ? `, ${skipped} skipped` : ''));
  process.exit(failed > 0 ? 1 : 0);
}

const idle = new Set();
const workers = new Set();
if (selected.length === 0) {
  console.log(`no test file matches ${pattern}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
// the workers are not in the terminal's process group: an interrupt of the runner ends them and theirs
for (const interrupt of ['SIGINT', 'SIGTERM']) {
  process.once(interrupt, () => {
    for (const worker of workers) endGroup(worker.child);
    process.exit(130);
  });
}
for (let i = 0; i < Math.min(workerCount, selected.length); i += 1) workers.add(startWorker());
