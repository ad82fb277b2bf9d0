// An A/B of the CPU a request costs in two (or more) builds of the service, run at the same time: each
// checkout's `vdb-service start` serves the peers benchmark's lookup at the same fixed rate, below
// saturation, so every build meets the same machine (the other processes, the host's noise) in the same
// seconds. Builds run one after the other (bench/cpu-per-request.mjs --root) differ by more between
// runs on a shared machine than most changes do.
//
//   npm run build   (in each checkout; an older commit: git worktree add DIR REV, link node_modules, build)
//   BENCH_PG_URL=postgres://postgres@127.0.0.1:5432/test node bench/cpu-ab.mjs DIR_A DIR_B [DIR_C ...]
//
// Environment: BENCH_RATE (requests/s per build, 3000), BENCH_WINDOWS (3), BENCH_DURATION (s per window,
// 10), BENCH_PORT (first port, 3081). The database needs the peers harness's `shop` schema. Linux only.
// Swap the order of the builds in a second run: the first one listed has measured a little higher.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { startLookupService, untilAnswering } from './lookup-service.mjs';
import { mainThread, processCpu } from './process-cpu.mjs';

const env = process.env;
const roots = process.argv.slice(2).map((dir) => resolve(dir));
if (roots.length < 2) throw new Error('usage: node bench/cpu-ab.mjs DIR_A DIR_B [DIR_C ...]');
if (!env.BENCH_PG_URL) throw new Error('set BENCH_PG_URL to the database holding the peers harness\'s shop schema');
const rate = Number(env.BENCH_RATE ?? 3000);
const windows = Number(env.BENCH_WINDOWS ?? 3);
const duration = Number(env.BENCH_DURATION ?? 10);
const firstPort = Number(env.BENCH_PORT ?? 3081);
const token = randomBytes(24).toString('hex');

const builds = roots.map((root, index) => ({ root, ...startLookupService({ root, port: firstPort + index, token, connections: 10 }), perRequest: [] }));
const sample = ({ child }) => {
  const threads = processCpu(child.pid);
  const main = mainThread(child.pid);
  return { process: threads.user + threads.system, main: main.user + main.system };
};

try {
  for (const build of builds) await untilAnswering(build.child, build.load);
  await Promise.all(builds.map(({ load }) => autocannon({ ...load, duration: 5, overallRate: rate })));
  for (let window = 1; window <= windows; window++) {
    const before = builds.map(sample);
    const results = await Promise.all(builds.map(({ load }) => autocannon({ ...load, duration, overallRate: rate })));
    builds.forEach((build, index) => {
      const after = sample(build);
      const { total } = results[index].requests;
      const failed = results[index].errors + results[index].timeouts + results[index].non2xx;
      const perRequest = (after.process - before[index].process) / total;
      build.perRequest.push(perRequest);
      console.log(`window ${window}  ${build.root}: ${total} requests (failed ${failed}), CPU per request ${perRequest.toFixed(1)} µs, main thread ${((after.main - before[index].main) / total).toFixed(1)} µs`);
    });
  }
  console.log('\nmean CPU per request:');
  for (const { root, perRequest } of builds) console.log(`  ${(perRequest.reduce((sum, value) => sum + value, 0) / perRequest.length).toFixed(1)} µs  ${root}`);
} finally {
  for (const { child } of builds) child.kill('SIGTERM');
}
