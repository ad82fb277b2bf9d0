import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { demoConfig, projectRoot, writeBundle } from '../../support/test-service.js';

const cliPath = join(projectRoot, 'dist/core/cli.js');
const fixtures = join(projectRoot, 'dist/test/fixtures/plugins');

interface Run { code: number | null; stdout: string; stderr: string }

function runCli(args: string[], untilStdout?: RegExp, onMatch?: (child: ReturnType<typeof spawn>, stdout: string) => Promise<void>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VDB_CONFIG: '' } });
    let stdout = '';
    let stderr = '';
    let matched = false;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (untilStdout && onMatch && !matched && untilStdout.test(stdout)) {
        matched = true;
        onMatch(child, stdout).catch(reject);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const baseConfig = {
  server: { host: '127.0.0.1', port: 0 },
  descriptors: './descriptors',
  datasources: { db: { adapter: 'pglite', init: ['seed/tiny.sql'] } },
  auth: { scheme: 'bearer', tokens: [{ token: 'cli-test-token-0001', subject: 'ops', roles: ['admin'] }] },
};
const tinyBundle = {
  'descriptors/seed/tiny.sql': 'create schema shop; create table shop.items (id integer primary key, name text not null);',
  'descriptors/vdbs/shop.yaml': 'name: shop\nversion: "1"\ndatasource: db\nschemas: [{ name: shop }]\n',
};

const cli = suite('vdb-service CLI');

cli('validate: a bad config stops with one line naming the file and the key', async () => {
  const configFile = writeBundle({ ...baseConfig, server: { port: 'eighty' } }, tinyBundle);
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 1);
  assert.equal(run.stderr.trim().split('\n'), [`${configFile}:2: server.port: must be integer`]);
});

cli('validate: a bad plugin manifest stops with one line naming the manifest and the problem', async () => {
  const configFile = writeBundle({ ...baseConfig, plugins: [join(fixtures, 'bad-schema')] }, tinyBundle);
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 1);
  const lines = run.stderr.trim().split('\n');
  assert.is(lines.length, 1);
  assert.match(lines[0] ?? '', /bad-schema\/plugin\.json: plugin bad-schema: invalid manifest: .*kind: must be one of/);
});

cli('validate: a bad VDB file stops with one line naming the file, the line and the problem', async () => {
  const configFile = writeBundle(baseConfig, { ...tinyBundle, 'descriptors/vdbs/shop.yaml': 'name: shop\nversion: "1"\ndatasource: db\nschemas: [{ name: shop, colour: red }]\n' });
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 1);
  assert.equal(run.stderr.trim().split('\n'), [`${configFile.replace('service.yaml', 'descriptors/vdbs/shop.yaml')}:4: schemas[0].colour: unknown key`]);
});

cli('start: a bad VDB file stops startup the same way, without a stack trace', async () => {
  const configFile = writeBundle(baseConfig, { ...tinyBundle, 'descriptors/vdbs/shop.yaml': 'name: shop\nversion: "1"\ndatasource: nowhere\nschemas: [{ name: shop }]\n' });
  const run = await runCli(['start', '--config', configFile]);
  assert.is(run.code, 1);
  assert.equal(run.stderr.trim().split('\n'), [`${configFile.replace('service.yaml', 'descriptors/vdbs/shop.yaml')}:3: unknown datasource "nowhere" (not under datasources in the config)`]);
});

cli('start: serves, then drains and exits 0 on SIGTERM', async () => {
  const configFile = writeBundle(baseConfig, tinyBundle);
  let health: unknown;
  const run = await runCli(['start', '--config', configFile], /"msg":"vdb-service listening"/, async (child, stdout) => {
    const url = /"url":"([^"]+)"/.exec(stdout)?.[1];
    health = await (await fetch(`${url}/observe/health`)).json();
    child.kill('SIGTERM');
  });
  assert.is((health as { status: string }).status, 'UP');
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /shutting down: draining requests/);
});

cli('validate: a valid bundle passes', async () => {
  const configFile = writeBundle(baseConfig, tinyBundle);
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /^ok: /m);
});

cli('validate: an isolated semantic failure of the demo is a warning at its file and line, not a failure', async () => {
  const configFile = writeBundle(demoConfig());
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stderr, /descriptors\/semantic\/retail-v2\/customers\.osi\.yaml:\d+: semantic model of retail 2: bind\.column_not_found: .* \(warning: isolated by policy\)/);
});

cli('validate: endpoint definitions print every problem as file:line: message, and | raw as a warning', async () => {
  const query = (sql: string) => `---\ntype: sqlDirect\nvirtualDatabase: shop\nquery: ${sql}\n`;
  const trusted = writeBundle(baseConfig, { ...tinyBundle, 'descriptors/queries/sorted.yaml': query("select id from shop.items order by {{ 'name' | raw }}") });
  const warned = await runCli(['validate', '--config', trusted]);
  assert.is(warned.code, 0, warned.stderr);
  assert.match(warned.stderr, /descriptors\/queries\/sorted\.yaml:4: \| raw splices text unchecked: it must never carry request data \(warning\)/);

  const broken = writeBundle(baseConfig, {
    ...tinyBundle,
    'descriptors/queries/quoted.yaml': query("select id from shop.items where name = '{{ name }}'"),
    'descriptors/queries/unknown.yaml': query('select colour from shop.items'),
  });
  const run = await runCli(['validate', '--config', broken]);
  assert.is(run.code, 1);
  const lines = run.stderr.trim().split('\n').map((line) => line.replace(/^.*descriptors\//, ''));
  assert.equal(lines.length, 2, run.stderr);
  assert.match(lines[0] ?? '', /^queries\/quoted\.yaml:4: quoted placeholder: bind the value, drop the quotes/);
  assert.match(lines[1] ?? '', /^queries\/unknown\.yaml:4: query: column "colour" does not exist/);
});

cli.run();
