/**
 * The shop of shop-data.ts split over two databases of their own on the PostgreSQL server (`<prefix>_crm` for
 * `fed_crm`, `<prefix>_shop` for `fed_shop`): other suites use these schema names in the test database, maybe
 * at the same time. And what the suites over it ask the service.
 */
import * as assert from 'uvu/assert';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import type { Backend } from '../../support/backends.js';
import { pause } from '../../support/fault-servers.js';
import { samplesOf, sampleValue } from '../../support/prometheus-text.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, type TestService } from '../../support/test-service.js';
import { dropDatabase, freshDatabase } from './corpus-oracle.js';
import { shopSetup } from './shop-data.js';

export interface ShopDatabases {
  readonly crm: Datasource;
  readonly shop: Datasource;
  /** The service's `datasources`: crm_db and shop_db on those databases. */
  readonly config: Record<string, unknown>;
  /** Drops both databases, and the roles `service` synced on them once they own nothing in either. */
  release(service: TestService | undefined): Promise<void>;
}

/** Both databases, created afresh and filled, with `extra` statements after the shop's on each. */
export async function openShopDatabases(server: Backend, prefix: string, extra: { crm?: readonly string[]; shop?: readonly string[] } = {}): Promise<ShopDatabases> {
  const url = server.url ?? '';
  const crmUrl = await freshDatabase(url, `${prefix}_crm`);
  const shopUrl = await freshDatabase(url, `${prefix}_shop`);
  const crm = await server.open('crm_db', crmUrl);
  const shop = await server.open('shop_db', shopUrl);
  for (const statement of [...shopSetup('postgres', 'fed_crm'), ...extra.crm ?? []]) await crm.query(statement, []);
  for (const statement of [...shopSetup('postgres', 'fed_shop'), ...extra.shop ?? []]) await shop.query(statement, []);
  return {
    crm, shop,
    config: {
      crm_db: { ...server.datasourceConfig, connection: { connectionString: crmUrl } },
      shop_db: { ...server.datasourceConfig, connection: { connectionString: shopUrl } },
    },
    release: async (service) => {
      await crm.close();
      await dropDatabase(url, `${prefix}_crm`);
      await shop.query('drop schema if exists fed_shop cascade', []);
      await dropSyncedRoles(service, shop);
      await shop.close();
      await dropDatabase(url, `${prefix}_shop`);
    },
  };
}

/** How many federated statements `datasource` answered with the other side's rows shipped to it. */
export async function shippedCount(service: TestService, datasource = 'shop_db'): Promise<number> {
  return sampleValue(samplesOf(await (await service.request('/observe/metrics')).text()), 'vdb_federated_shipped_total', { datasource });
}

/**
 * Starts query definition `name` as the analyst, waits until one statement of it waits in pg_sleep on `db`
 * (`filter` narrows pg_stat_activity), goes away, and checks that the statement no longer runs there.
 */
export async function cancelledWhenClientGoes(db: Datasource, service: TestService, name: string, filter: string, runs: string): Promise<void> {
  const running = async () => Number((await db.query(
    `select count(*)::int as n from pg_stat_activity where state = 'active' and wait_event = 'PgSleep'${filter} and pid <> pg_backend_pid()`, [],
  )).rows[0]?.['n']);
  const client = new AbortController();
  const request = service.request(`/api/v1/query/perform/${name}`, {
    method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN, signal: client.signal,
  }).then(() => 'answered', () => 'aborted');
  let count = 0;
  for (let tries = 0; count === 0 && tries < 50; tries += 1) {
    await pause(100);
    count = await running();
  }
  assert.is(count, 1, runs);
  client.abort();
  assert.is(await request, 'aborted');
  for (let tries = 0; count > 0 && tries < 30; tries += 1) {
    await pause(100);
    count = await running();
  }
  assert.is(count, 0, 'no statement of the query still runs on PostgreSQL');
}
