import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { configFileFrom, loadConfig } from '../../../core/config/config-loader.js';
import { StartupError } from '../../../core/plugin-api/errors.js';
import { writeBundle } from '../../support/test-service.js';

const minimal = {
  datasources: { main: { adapter: 'pglite' } },
  auth: { scheme: 'bearer', tokens: [{ token: 't', subject: 's', roles: [] }] },
};

function writeText(text: string): string {
  const file = writeBundle({}, { 'raw.yaml': text });
  return join(dirname(file), 'raw.yaml');
}

function problemsOf(file: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig(file, env);
  } catch (error) {
    assert.instance(error, StartupError);
    return (error as StartupError).message.split('\n');
  }
  throw new Error('expected a StartupError');
}

const config = suite('config loading');

config('fills the documented defaults', () => {
  const file = writeBundle(minimal);
  const loaded = loadConfig(file, {});
  assert.is(loaded.server.port, 8282);
  assert.is(loaded.server.host, '0.0.0.0');
  assert.is(loaded.server.maxBodyBytes, 1048576);
  assert.is(loaded.server.requestTimeoutMs, 30000);
  assert.equal(loaded.auth.adminRoles, ['admin']);
  assert.is(loaded.auth.scheme, 'bearer');
  assert.equal(loaded.auth.settings, { tokens: [{ token: 't', subject: 's', roles: [] }] });
  assert.is(loaded.semantic.activationFailurePolicy, 'isolate');
  assert.is(loaded.instanceId, `${hostname()}:8282`);
  assert.is(loaded.descriptors, join(dirname(file), 'descriptors'));
  assert.equal(loaded.datasources['main']?.init, []);
  assert.equal(loaded.sql, {
    maxStatementBytes: 65536, enabled: false, host: '127.0.0.1', port: 5433, maxConnections: 100, idleTimeoutMs: 600000,
    statementTimeoutMs: 30000, allowWrites: false,
  });
});

config('sql.maxStatementBytes bounds statements; below 1024 it is a problem at its line, and so is an unknown key of sql', () => {
  assert.is(loadConfig(writeBundle({ ...minimal, sql: { maxStatementBytes: 262144 } }), {}).sql.maxStatementBytes, 262144);
  const small = writeText('datasources:\n  main: { adapter: pglite }\nauth: { scheme: bearer }\nsql:\n  maxStatementBytes: 10\n');
  assert.equal(problemsOf(small), [`${displayed(small)}:5: sql.maxStatementBytes: must be >= 1024`]);
  const unknown = writeText('datasources:\n  main: { adapter: pglite }\nauth: { scheme: bearer }\nsql:\n  maxRows: 5\n');
  assert.equal(problemsOf(unknown), [`${displayed(unknown)}:5: sql.maxRows: unknown key`]);
});

config('resolves plugin paths against the config folder and keeps package names', () => {
  const file = writeBundle({ ...minimal, plugins: ['./my-plugins/strings', '@acme/vdb-strings', { path: 'x', config: { a: 1 } }] });
  const loaded = loadConfig(file, {});
  assert.equal(loaded.plugins, [
    { source: join(dirname(file), 'my-plugins/strings'), kind: 'path', config: {} },
    { source: '@acme/vdb-strings', kind: 'package', config: {} },
    { source: join(dirname(file), 'x'), kind: 'path', config: { a: 1 } },
  ]);
});

config('substitutes ${env:NAME} and ${env:NAME:-default}', () => {
  const file = writeBundle({
    ...minimal,
    instanceId: '${env:INSTANCE:-fallback}',
    auth: { scheme: 'bearer', tokens: [{ token: '${env:ADMIN_TOKEN}', subject: 'ops', roles: ['admin'] }] },
  });
  const loaded = loadConfig(file, { ADMIN_TOKEN: 's3cret' });
  assert.equal(loaded.auth.settings['tokens'], [{ token: 's3cret', subject: 'ops', roles: ['admin'] }]);
  assert.is(loaded.instanceId, 'fallback');
});

config('an unset variable is a problem naming the file, the line, the key and the variable', () => {
  const file = writeText('datasources:\n  main: { adapter: pglite }\nauth:\n  scheme: bearer\n  tokens:\n    - token: ${env:ADMIN_TOKEN}\n');
  assert.equal(problemsOf(file), [`${displayed(file)}:6: auth.tokens[0].token: environment variable ADMIN_TOKEN is not set`]);
});

config('an unknown key is reported at its line', () => {
  const file = writeText('server:\n  port: 8282\n  prot: 1\ndatasources:\n  main: { adapter: pglite }\nauth: { scheme: bearer }\n');
  assert.equal(problemsOf(file), [`${displayed(file)}:3: server.prot: unknown key`]);
});

config('every problem is listed, each on its own line', () => {
  const file = writeText('server:\n  port: eighty\ndatasources: {}\nauth: { adminRoles: [admin] }\nsemantic: { activationFailurePolicy: sometimes }\n');
  const problems = problemsOf(file);
  assert.ok(problems.includes(`${displayed(file)}:2: server.port: must be integer`), problems.join('\n'));
  assert.ok(problems.includes(`${displayed(file)}:3: datasources: must NOT have fewer than 1 properties`), problems.join('\n'));
  assert.ok(problems.includes(`${displayed(file)}:4: auth: missing required key "scheme"`), problems.join('\n'));
  assert.ok(problems.includes(`${displayed(file)}:5: semantic.activationFailurePolicy: must be one of isolate, blockStartup`), problems.join('\n'));
});

config('invalid YAML names the line', () => {
  const file = writeText('server:\n  port: 8282\n   host: x\n');
  const [problem] = problemsOf(file);
  assert.match(problem ?? '', new RegExp(`^${escape(displayed(file))}:2: invalid YAML: Nested mappings are not allowed in compact mappings$`));
});

config('a missing file is one line', () => {
  assert.equal(problemsOf('/nonexistent/service.yaml'), ['/nonexistent/service.yaml: file not found']);
});

config('the config file comes from --config, then VDB_CONFIG, then ./service.yaml', () => {
  assert.is(configFileFrom(['--config', 'a.yaml'], { VDB_CONFIG: 'b.yaml' }), resolve('a.yaml'));
  assert.is(configFileFrom(['--config=c.yaml'], {}), resolve('c.yaml'));
  assert.is(configFileFrom([], { VDB_CONFIG: 'b.yaml' }), resolve('b.yaml'));
  assert.is(configFileFrom([], {}), resolve('service.yaml'));
  assert.throws(() => configFileFrom(['--config'], {}), /--config needs a file path/);
});

function displayed(file: string): string {
  const shown = file.startsWith(process.cwd()) ? file.slice(process.cwd().length + 1) : file;
  return shown;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

config.run();

const exclusive = suite('config loading: exclusive keys');

exclusive('two keys of a oneOf given together are named', () => {
  const file = writeBundle({ ...minimal, plugins: [{ path: './a', package: 'b' }] });
  const problems = problemsOf(file);
  assert.ok(problems.some((problem) => /plugins\[0\]: give only one of the alternatives \(path, package\)$/.test(problem)), problems.join('\n'));
});

exclusive.run();
