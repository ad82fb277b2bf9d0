import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Datasource } from '../../core/plugin-api/sql-dialect.js';
import type { Backend } from './backends.js';
import { dropSyncedRoles } from './synced-roles.js';
import { demoConfig, demoDescriptors, startTestService, type TestService } from './test-service.js';

/** The demo with MCP on, on a backend: PGlite as it is shared, a server seeded with the demo's retail schema. */
export interface McpDemo {
  service: TestService;
  raw: Datasource;
  close(): Promise<void>;
}

export async function startMcpDemo(backend: Backend, overrides: Record<string, unknown> = {}): Promise<McpDemo> {
  const raw = await backend.open();
  if (backend.name !== 'pglite') {
    await raw.query('drop schema if exists sales cascade', []);
    await raw.query(readFileSync(join(demoDescriptors, 'seed', 'retail.sql'), 'utf8'), []);
  }
  const service = await startTestService({ config: demoConfig({ mcp: { enabled: true }, ...overrides }), datasources: { retail_db: raw } });
  return {
    service,
    raw,
    close: async () => {
      await service.close();
      if (backend.name === 'pglite') return;
      await dropSyncedRoles(service, raw);
      await raw.query('drop schema if exists sales cascade', []);
      if (backend.closeAfter) await raw.close();
    },
  };
}

/** The SDK's own client over Streamable HTTP, with `token` as its bearer credential. */
export async function mcpClient(service: TestService, token: string): Promise<Client> {
  const client = new Client({ name: 'vdb-service-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${service.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/**
 * A proxy in front of `target` that adds `authorization: Bearer <token>` to every request and keeps every
 * other header (Host and Origin included): for the conformance tool, which sends no credentials.
 */
export async function credentialProxy(target: string, token: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, authorization: `Bearer ${token}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Node 24, where `.ci/run` keeps it (the conformance tool needs Node 22 APIs), or why it is not there. */
export function node24(): { path: string } | { missing: string } {
  const path = join(process.env['XDG_CACHE_HOME'] ?? join(homedir(), '.cache'), 'vdb-service', 'node-24', 'package', 'bin', 'node');
  if (!existsSync(path)) return { missing: `Node 24 is not at ${path} (.ci/run installs it)` };
  const version = spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout.trim();
  return version.startsWith('v24.') ? { path } : { missing: `${path} is ${version || 'not runnable'}, not Node 24` };
}
