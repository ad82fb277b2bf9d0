import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { stringify } from 'yaml';
import { PLUGIN_API_VERSION } from '../../../core/plugin-api/api-version.js';
import { spawnConfigFile, type SpawnedService } from '../../support/spawned-service.js';
import { demoConfig, projectRoot } from '../../support/test-service.js';

/*
 * A plugin written as its own package, outside the project: its TypeScript imports only
 * `vdb-service/plugin-api`, is compiled against the types the package exports, and the service loads it by
 * package name from a deployment folder, as `npm install ../acme-api-key` lays them out (file: dependencies
 * are symlinks). The service runs as its own process, through the CLI.
 */
const KEY = 'acme-key-0123456789abcdef';

const PLUGIN_SOURCE = `import { CredentialError, PLUGIN_API_VERSION, type AuthScheme, type PluginContext } from 'vdb-service/plugin-api';

interface ApiKey { key: string; subject: string; roles: string[] }

/** Callers send \`x-api-key: <key>\`; the registration uses its context directly, without a define helper. */
export default function register(context: PluginContext): void {
  context.logger.info('api-key scheme registering', { api: PLUGIN_API_VERSION });
  context.contribute('authScheme', {
    id: context.manifest.id,
    create: async (config): Promise<AuthScheme> => {
      const keys = config['keys'] as ApiKey[];
      return {
        challenge: 'ApiKey realm="acme"',
        authenticate: async (headers) => {
          const presented = headers['x-api-key'];
          if (typeof presented !== 'string' || presented === '') throw new CredentialError('credentials_missing', 'send x-api-key');
          const found = keys.find((entry) => entry.key === presented);
          if (!found) throw new CredentialError('token_unknown', 'unknown api key');
          return { subject: found.subject, roles: found.roles, scheme: context.manifest.id };
        },
      };
    },
  });
}
`;

const MANIFEST = {
  name: '@acme/vdb-api-key', version: '1.2.0', kind: 'authScheme', id: 'apiKey', entry: 'index.js', apiVersion: '^1.0.0',
  description: 'API keys in an x-api-key header',
  configSchema: {
    type: 'object', additionalProperties: false, required: ['keys'],
    properties: { keys: { type: 'array', minItems: 1, items: { type: 'object', required: ['key', 'subject', 'roles'], properties: {
      key: { type: 'string', minLength: 16, 'x-secret': true }, subject: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } },
    } } } },
  },
};

function write(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
}

interface Context { workspace: string; service: SpawnedService | undefined }
const packaged = suite<Context>('a plugin package outside the tree', { workspace: '', service: undefined });

packaged.before(async (context) => {
  context.workspace = mkdtempSync(join(tmpdir(), 'vdb-plugin-package-'));
  const plugin = join(context.workspace, 'acme-api-key');
  write(join(plugin, 'package.json'), JSON.stringify({
    name: '@acme/vdb-api-key', version: '1.2.0', type: 'module',
    exports: { '.': './index.js', './plugin.json': './plugin.json' },
    dependencies: { 'vdb-service': `file:${projectRoot}` },
  }, null, 2));
  write(join(plugin, 'plugin.json'), JSON.stringify(MANIFEST, null, 2));
  write(join(plugin, 'index.ts'), PLUGIN_SOURCE);
  write(join(plugin, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: [], outDir: '.' },
    files: ['index.ts'],
  }));
  // What `npm install` makes of the file: dependency: a link to the service's folder.
  mkdirSync(join(plugin, 'node_modules'));
  symlinkSync(projectRoot, join(plugin, 'node_modules', 'vdb-service'), 'dir');
  execFileSync(join(projectRoot, 'node_modules', '.bin', 'tsc'), ['-p', join(plugin, 'tsconfig.json')], { stdio: 'pipe' });

  // The deployment: service.yaml naming the plugin package, installed beside it.
  const deployment = join(context.workspace, 'deployment');
  mkdirSync(join(deployment, 'node_modules', '@acme'), { recursive: true });
  symlinkSync(plugin, join(deployment, 'node_modules', '@acme', 'vdb-api-key'), 'dir');
  const config = demoConfig({
    plugins: ['@acme/vdb-api-key'],
    auth: { scheme: 'apiKey', adminRoles: ['admin'], keys: [{ key: KEY, subject: 'acme-ops', roles: ['admin', 'clerk'] }] },
  });
  write(join(deployment, 'service.yaml'), stringify(config));
  context.service = await spawnConfigFile(join(deployment, 'service.yaml'));
});

packaged.after(async ({ workspace, service }) => {
  await service?.stop();
  rmSync(workspace, { recursive: true, force: true });
});

packaged('its source imports nothing but vdb-service/plugin-api, and compiles against the exported types', ({ workspace }) => {
  const source = readFileSync(join(workspace, 'acme-api-key', 'index.ts'), 'utf8');
  assert.equal([...source.matchAll(/from '([^']+)'/g)].map((match) => match[1]), ['vdb-service/plugin-api']);
  assert.match(readFileSync(join(workspace, 'acme-api-key', 'index.js'), 'utf8'), /from 'vdb-service\/plugin-api'/);
});

packaged('the service loads it by package name and its scheme authenticates HTTP requests', async ({ service }) => {
  const running = service as SpawnedService;
  const answer = await fetch(`${running.url}/api/v1/vdbs`, { headers: { 'x-api-key': KEY } });
  assert.is(answer.status, 200);
  const admin = await fetch(`${running.url}/api/v1/admin/semantic/vdbs`, { headers: { 'x-api-key': KEY } });
  assert.is(admin.status, 200, 'the roles of the key make the caller an admin');

  const missing = await fetch(`${running.url}/api/v1/vdbs`);
  assert.is(missing.status, 401);
  assert.is(missing.headers.get('www-authenticate'), 'ApiKey realm="acme"');
  assert.is(((await missing.json()) as { code: string }).code, 'credentials_missing');
  const unknown = await fetch(`${running.url}/api/v1/vdbs`, { headers: { 'x-api-key': 'not-a-key-0123456789' } });
  assert.is(unknown.status, 401);
  assert.is(((await unknown.json()) as { code: string }).code, 'token_unknown');
});

packaged('its log line carries its name, through the logger of its context', ({ service }) => {
  const line = (service as SpawnedService).output().split('\n').find((text) => text.includes('api-key scheme registering'));
  assert.ok(line, 'the plugin logged');
  const parsed = JSON.parse(line as string) as { plugin: string; api: string };
  assert.equal([parsed.plugin, parsed.api], ['@acme/vdb-api-key', PLUGIN_API_VERSION]);
});

packaged.run();
