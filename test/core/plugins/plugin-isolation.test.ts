import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { coreTokens } from '../../../core/service-tokens.js';
import type { SnoopReport } from '../../fixtures/plugins/snoop/index.js';
import { demoConfig, startTestService, type TestService } from '../../support/test-service.js';

// Secrets of the config: a datasource password, a connection string, a bearer token, and one from the environment.
const PASSWORD = 'pw-of-the-vault-8c41f2';
const CONNECTION = 'postgres://vault:cs-secret-77ad90@127.0.0.1:1/vault';
const TOKEN = 'bearer-secret-token-5e0a93c1';

const snoop = fileURLToPath(new URL('../../fixtures/plugins/snoop/', import.meta.url));

interface Context { service: TestService | undefined; report: SnoopReport | undefined }
const isolation = suite<Context>('a plugin reaches only what the plugin API names', { service: undefined, report: undefined });

isolation.before(async (context) => {
  context.service = await startTestService({
    config: demoConfig({
      plugins: [snoop],
      datasources: {
        retail_db: { adapter: 'pglite', init: ['seed/retail.sql'] },
        crm_db: { adapter: 'pglite', init: ['seed/crm.sql'] },
        vault_db: { adapter: 'postgres', connection: { host: '127.0.0.1', port: 1, user: 'vault', password: PASSWORD, database: 'vault' } },
        ledger_db: { adapter: 'postgres', connection: { connectionString: CONNECTION } },
      },
      auth: { scheme: 'bearer', adminRoles: ['admin'], tokens: [{ token: TOKEN, subject: 'ops', roles: ['admin'] }] },
    }),
  });
  context.report = (globalThis as { snoopReport?: SnoopReport }).snoopReport;
});

isolation.after(async ({ service }) => {
  await service?.close();
});

isolation('the secrets are in the service: there is something to find', ({ service }) => {
  const config = JSON.stringify((service as TestService).container.resolve(coreTokens.config));
  for (const secret of [PASSWORD, CONNECTION, TOKEN]) assert.ok(config.includes(secret));
});

isolation('the registration gets a frozen context of four names', ({ report }) => {
  assert.ok(report, 'the snoop plugin registered');
  assert.equal(report.contextKeys, ['manifest', 'config', 'logger', 'contribute']);
  assert.ok(report.frozen);
  assert.ok(report.objects > 5, `walked ${report.objects} objects`);
  assert.ok(report.strings.includes('snoop'), 'the walk reads values: its own manifest id');
});

isolation('nothing reachable from the context holds the config, a datasource or a secret', ({ report }) => {
  const strings = (report as SnoopReport).strings;
  for (const secret of [PASSWORD, CONNECTION, TOKEN, 'vault_db', 'ledger_db', 'retail_db', 'adminRoles', 'datasources']) {
    assert.ok(!strings.some((text) => text.includes(secret)), `"${secret}" is reachable from the plugin context`);
  }
  assert.ok(!strings.includes('resolve') && !strings.includes('createChildContainer'), 'no container is reachable');
  assert.equal((report as SnoopReport).resolvedThroughContext, [], 'no core token resolves through anything reachable');
});

isolation('the container a plugin can import itself resolves none of the core tokens', ({ report }) => {
  const tokens = (report as SnoopReport).globalTokens;
  assert.equal(Object.keys(tokens).length, 7);
  for (const [token, outcome] of Object.entries(tokens)) assert.match(outcome, /^refused: /, `${token}: ${outcome}`);
});

isolation('the plugin still contributed through its context', async ({ service }) => {
  const functions = (service as TestService).container.resolve(coreTokens.extensions).templateFunctions.get('snoop');
  assert.ok((functions?.functions['found']?.() as number) > 0);
});

isolation.run();
