// One worker of scripts/run-tests.mjs: a process that runs the test files it is sent, one at a time, with uvu.
// It stays up between files so that what a process sets up once (the shared PGlite: 3-5 s and ~700 MB) serves
// many files. After each file it writes the end mark on stdout; the runner reads uvu's summary above it.
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';

// the runner looks for this line (the same text is in run-tests.mjs)
const END_MARK = '\u0000vdb-test-file-done\u0000';

// uvu queues the suites a file registers (instead of running them on import) while UVU_DEFER is set: set it
// before uvu loads, as uvu's own CLI does.
globalThis.UVU_DEFER = 1;
const uvu = await import('uvu');
// a suite's hook that throws says what it threw (uvu alone drops it)
register('./uvu-hooks.mjs', import.meta.url);

// What the tests write to stderr goes with the rest of their file's output, in order.
process.stderr.write = process.stdout.write.bind(process.stdout);

process.on('message', (job) => {
  if (job === 'exit') process.exit(0);
  void runFile(job).then(() => process.stdout.write(`\n${END_MARK}\n`));
});

/** Runs one file's suites (`backend`: the one backend a forEachBackend file registers) and prints uvu's summary. */
async function runFile({ file, name, backend }) {
  globalThis.UVU_QUEUE.length = 0;
  globalThis.UVU_QUEUE.push([name]);
  globalThis.UVU_INDEX = 0;
  if (backend === undefined) delete process.env['VDB_TEST_BACKEND'];
  else process.env['VDB_TEST_BACKEND'] = backend;
  try {
    // a query of its own per backend: the module is evaluated again, registering that backend's suites
    await import(pathToFileURL(file).href + (backend === undefined ? '' : `?backend=${backend}`));
    await uvu.exec();
  } catch (error) {
    // no summary follows: the runner counts the file as failed
    console.log(`the file could not run: ${error?.stack ?? error}`);
  }
}

process.send?.('ready');
