// Runs the uvu suites on the compiled tests and closes with the line CI reads: `N passed, N failed[, N skipped]`.
// uvu prints Total/Passed/Skipped; the counts below are read from that output, never computed by hand.
// Usage: node scripts/run-tests.mjs [pattern]   (pattern: a regex on test file paths, default: every *.test.js)
import { spawn } from 'node:child_process';

// uvu imports every file the pattern matches (source maps and helpers too): only *.test.js files run.
const pattern = `^(?=.*(?:${process.argv[2] ?? ''})).*\\.test\\.js$`;
const child = spawn(process.execPath, ['node_modules/uvu/bin.js', 'dist/test', pattern], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0' },
});

let output = '';
child.stdout.on('data', (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
});

child.on('close', (code) => {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const count = (label) => {
    const match = new RegExp(`^\\s*${label}:\\s+(\\d+)\\s*$`, 'm').exec(plain);
    return match ? Number(match[1]) : undefined;
  };
  const total = count('Total');
  const passed = count('Passed');
  const skipped = count('Skipped') ?? 0;
  if (total === undefined || passed === undefined) {
    console.log('0 passed, 1 failed');
    console.error('the test runner ended without its summary (exit code ' + code + ')');
    process.exit(1);
  }
  // uvu counts a test whose suite hook threw as not passed without failing the run: count it as failed.
  const failed = total - passed;
  console.log(`${passed} passed, ${failed} failed` + (skipped > 0 ? `, ${skipped} skipped` : ''));
  process.exit(failed > 0 || code !== 0 ? 1 : 0);
});
