import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CORE_VERSION } from '../../../core/plugins/manifest-validation.js';
import { demoConfig, projectRoot, writeBundle } from '../../support/test-service.js';

const cliPath = join(projectRoot, 'dist/core/cli.js');
const fixtures = join(projectRoot, 'dist/test/fixtures/plugins');

interface Run { code: number | null; stdout: string; stderr: string }

interface RunOptions {
  /** Variables added to the environment (PORT and VDB_CONFIG are cleared unless given here). */
  env?: Record<string, string>;
  /** Once stdout + stderr match, `onMatch` runs (e.g. to call the service, then stop it). */
  until?: RegExp;
  onMatch?: (child: ReturnType<typeof spawn>, output: { stdout: string; stderr: string }) => Promise<void>;
}

function runCli(args: string[], options: RunOptions = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, VDB_CONFIG: '', PORT: '', ...options.env } });
    let stdout = '';
    let stderr = '';
    let matched = false;
    const check = () => {
      if (options.until && options.onMatch && !matched && options.until.test(`${stdout}\n${stderr}`)) {
        matched = true;
        options.onMatch(child, { stdout, stderr }).catch(reject);
      }
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      check();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      check();
    });
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
  assert.equal(run.stdout.trim().split('\n'), [`${configFile}:2: server.port: must be integer`]);
});

cli('validate: a bad plugin manifest stops with one line naming the manifest and the problem', async () => {
  const configFile = writeBundle({ ...baseConfig, plugins: [join(fixtures, 'bad-schema')] }, tinyBundle);
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 1);
  const lines = run.stdout.trim().split('\n');
  assert.is(lines.length, 1);
  assert.match(lines[0] ?? '', /bad-schema\/plugin\.json: plugin bad-schema: invalid manifest: .*kind: must be one of/);
});

cli('validate: a bad VDB file stops with one line naming the file, the line and the problem', async () => {
  const configFile = writeBundle(baseConfig, { ...tinyBundle, 'descriptors/vdbs/shop.yaml': 'name: shop\nversion: "1"\ndatasource: db\nschemas: [{ name: shop, colour: red }]\n' });
  const run = await runCli(['validate', '--config', configFile]);
  assert.is(run.code, 1);
  assert.equal(run.stdout.trim().split('\n'), [`${configFile.replace('service.yaml', 'descriptors/vdbs/shop.yaml')}:4: schemas[0].colour: unknown key`]);
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
  const run = await runCli(['start', '--config', configFile], { until: /"msg":"vdb-service listening"/, onMatch: async (child, { stdout }) => {
    const url = /"url":"([^"]+)"/.exec(stdout)?.[1];
    health = await (await fetch(`${url}/observe/health`)).json();
    child.kill('SIGTERM');
  } });
  assert.is((health as { status: string }).status, 'UP');
  assert.is(run.code, 0, run.stderr);
  assert.match(run.stdout, /shutting down: draining requests/);
});

/** Starts the CLI, waits for the line for people that ends the summary, then stops it with SIGTERM. */
function startAndStop(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCli(['start', ...args], { env, until: /^\d+ quer(y|ies), .*$/m, onMatch: async (child) => { child.kill('SIGTERM'); } });
}

/** A TCP port that is held open until `release` is called. */
async function takenPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

cli('start: after the JSON log line, lines for people on stderr: URLs, each VDB with its state, the counts', async () => {
  const configFile = writeBundle(baseConfig, tinyBundle);
  const run = await startAndStop(['--config', configFile]);
  assert.is(run.code, 0, run.stderr);
  for (const line of run.stdout.trim().split('\n')) JSON.parse(line);
  const url = /"url":"([^"]+)"/.exec(run.stdout)?.[1] ?? '';
  assert.equal(run.stderr.trim().split('\n'), [
    `vdb-service ${CORE_VERSION} listening on ${url} (API reference: ${url}/docs)`,
    `admin API on the same listener (${url}/api/v1/admin/...); server.admin gives it one of its own`,
    'VDB shop 1: catalogOnly (no semantic model; its catalog is served)',
    '0 queries, 0 actions, 1 capability (answer)',
  ]);
  assert.not.match(run.stderr, /cli-test-token/, 'a token other than the demo\'s built-in ones is never printed');
});

cli('start: with the demo config, a failed VDB shows its first error, and the built-in local tokens are shown', async () => {
  const configFile = writeBundle({
    ...demoConfig(),
    auth: { scheme: 'bearer', tokens: [
      { token: 'local-dev-admin-token', subject: 'ops', roles: ['admin', 'clerk'] },
      { token: 'local-dev-analyst-token', subject: 'analyst', roles: ['analyst'] },
    ] },
  });
  const run = await startAndStop(['--config', configFile]);
  assert.is(run.code, 0, run.stderr);
  const url = /"url":"([^"]+)"/.exec(run.stdout)?.[1] ?? '';
  const lines = run.stderr.trim().split('\n');
  assert.ok(lines.includes('VDB retail 1: active (semantic model published)'), run.stderr);
  assert.ok(lines.some((line) => /^VDB retail 2: invalid \(isolated by policy: served without its model\): .*descriptors\/semantic\/retail-v2\/customers\.osi\.yaml:\d+: bind\.column_not_found: /.test(line)), run.stderr);
  assert.ok(lines.includes('4 queries, 2 actions, 1 capability (answer)'), run.stderr);
  assert.ok(lines.includes('local token: Authorization: Bearer local-dev-admin-token (subject ops, roles admin, clerk)'), run.stderr);
  assert.ok(lines.includes(`try: curl -s -H "Authorization: Bearer local-dev-analyst-token" ${url}/api/v1/vdbs`), run.stderr);
});

// The port tests start a bundle without VDBs: no database is opened, so each start is quick.
cli('start: a port already taken ends startup with one line naming server.port, exit 1, no stack', async () => {
  const taken = await takenPort();
  try {
    const configFile = writeBundle({ ...baseConfig, server: { host: '127.0.0.1', port: taken.port } });
    const run = await runCli(['start', '--config', configFile]);
    assert.is(run.code, 1);
    assert.equal(run.stderr.trim().split('\n'), [
      `cannot listen on 127.0.0.1:${taken.port}: the port is taken (server.port in ${configFile}; or PORT=... / --port ...)`,
    ]);
    const byFlag = await runCli(['start', '--config', writeBundle(baseConfig), '--port', String(taken.port)]);
    assert.is(byFlag.code, 1);
    assert.match(byFlag.stderr, new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${taken.port}: the port is taken \\(set by --port ${taken.port}, which overrides server\\.port in .*service\\.yaml\\)\n$`));
  } finally {
    await taken.release();
  }
});

cli('start: --port wins over PORT, which wins over server.port', async () => {
  const taken = await takenPort();
  try {
    const configFile = writeBundle({ ...baseConfig, server: { host: '127.0.0.1', port: taken.port } });
    const byEnv = await startAndStop(['--config', configFile], { PORT: '0' });
    assert.is(byEnv.code, 0, byEnv.stderr);
    const byFlag = await startAndStop(['--config', configFile, '--port', '0'], { PORT: String(taken.port) });
    assert.is(byFlag.code, 0, byFlag.stderr);
    const refused = await runCli(['start', '--config', configFile, '--port', 'http']);
    assert.is(refused.code, 1);
    assert.is(refused.stderr, '--port: "http" is not a port number (0 to 65535)\n');
  } finally {
    await taken.release();
  }
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
  assert.match(run.stdout, /descriptors\/semantic\/retail-v2\/customers\.osi\.yaml:\d+: semantic model of retail 2: bind\.column_not_found: .* \(warning: isolated by policy\)/);
  // logs go to stderr, so stdout holds nothing but problems and the verdict
  assert.ok(run.stdout.trim().split('\n').every((line) => !line.startsWith('{')), run.stdout);
  assert.ok(run.stderr.trim().split('\n').every((line) => line.startsWith('{')), run.stderr);

  const strict = await runCli(['validate', '--strict', '--config', configFile]);
  assert.is(strict.code, 1, 'with --strict an isolated semantic error fails');
  assert.match(strict.stdout, /customers\.osi\.yaml:\d+: semantic model of retail 2: bind\.column_not_found: .* \(isolated by policy; an error with --strict\)/);
  assert.not.match(strict.stdout, /^ok: /m);
});

cli('validate: endpoint definitions print every problem as file:line: message, and | raw as a warning', async () => {
  const query = (sql: string) => `---\ntype: sqlDirect\nvirtualDatabase: shop\nquery: ${sql}\n`;
  const trusted = writeBundle(baseConfig, { ...tinyBundle, 'descriptors/queries/sorted.yaml': query("select id from shop.items order by {{ 'name' | raw }}") });
  const warned = await runCli(['validate', '--config', trusted]);
  assert.is(warned.code, 0, warned.stderr);
  assert.match(warned.stdout, /descriptors\/queries\/sorted\.yaml:4: \| raw splices text unchecked: it must never carry request data \(warning\)/);

  const broken = writeBundle(baseConfig, {
    ...tinyBundle,
    'descriptors/queries/quoted.yaml': query("select id from shop.items where name = '{{ name }}'"),
    'descriptors/queries/unknown.yaml': query('select colour from shop.items'),
  });
  const run = await runCli(['validate', '--config', broken]);
  assert.is(run.code, 1);
  const lines = run.stdout.trim().split('\n').map((line) => line.replace(/^.*descriptors\//, ''));
  assert.equal(lines.length, 2, run.stdout);
  assert.match(lines[0] ?? '', /^queries\/quoted\.yaml:4: quoted placeholder: bind the value, drop the quotes/);
  assert.match(lines[1] ?? '', /^queries\/unknown\.yaml:4: query: column "colour" does not exist/);
});

cli.run();
