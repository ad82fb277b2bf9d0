import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import { startService, type RunningService } from '../../core/service.js';
import { sharedCrmPglite, sharedPglite } from './shared-pglite.js';

/** The project root (tests run from dist/test/support). */
export const projectRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const demoDescriptors = join(projectRoot, 'descriptors');

export const ADMIN_TOKEN = 'test-admin-token';
export const ANALYST_TOKEN = 'test-analyst-token';

/** service.yaml of the demo bundle, as tests use it: tokens of their own, PGlite shared per process. */
export function demoConfig(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    instanceId: 'test-1',
    server: { host: '127.0.0.1', port: 0 },
    descriptors: demoDescriptors,
    datasources: { retail_db: { adapter: 'pglite', init: ['seed/retail.sql'] }, crm_db: { adapter: 'pglite', init: ['seed/crm.sql'] } },
    auth: {
      scheme: 'bearer',
      adminRoles: ['admin'],
      tokens: [
        { token: ADMIN_TOKEN, subject: 'ops', roles: ['admin', 'clerk'] },
        { token: ANALYST_TOKEN, subject: 'analyst', roles: ['analyst'] },
      ],
    },
    logging: { level: 'info' },
    ...overrides,
  };
}

/** Writes a config (and any bundle files) into a fresh temp folder; returns the config file's path. */
export function writeBundle(config: Record<string, unknown>, files: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'vdb-test-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const file = join(dir, 'service.yaml');
  writeFileSync(file, stringify(config));
  return file;
}

export interface TestService extends RunningService {
  /** Every JSON log line the service wrote. */
  logs: string[];
  /** fetch against the service, with the admin token unless `token` says otherwise (null: none). */
  request(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
}

export interface TestServiceOptions {
  config?: Record<string, unknown>;
  files?: Record<string, string>;
  /**
   * Datasources to hand in; by default `retail_db` is the process's shared PGlite. With the demo's descriptors,
   * `crm_db` is the process's shared second PGlite unless one is handed in.
   */
  datasources?: Record<string, Datasource>;
}

/** Starts the real service on port 0 (backstage's startTestServer); tests talk to it over HTTP. */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(...chunk.toString().split('\n').filter((line) => line !== ''));
      done();
    },
  });
  const config = options.config ?? demoConfig();
  const configFile = writeBundle(config, options.files);
  const datasources = { ...(options.datasources ?? { retail_db: await sharedPglite() }) };
  if (config['descriptors'] === demoDescriptors && datasources['crm_db'] === undefined) datasources['crm_db'] = await sharedCrmPglite();
  const service = await startService({ configFile, logDestination, datasources, port: 0, env: {} });
  const request = (path: string, init: RequestInit & { token?: string | null } = {}) => {
    const { token = ADMIN_TOKEN, headers, ...rest } = init;
    const allHeaders = new Headers(headers);
    if (token !== null) allHeaders.set('authorization', `Bearer ${token}`);
    return fetch(`${service.url}${path}`, { ...rest, headers: allHeaders });
  };
  return Object.assign(service, { logs, request });
}
