import { readFileSync } from 'node:fs';
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
