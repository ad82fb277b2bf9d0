// What bench/federation.mjs and bench/federation-ab.mjs share: the two statements, the caller's token, and
// the service's config over the three databases the first one writes (fedbench_crm, fedbench_shop; fedbench_single
// is the baseline's).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const TOKEN = 'bench-federation-token-0123456789';

/** One customer's orders and their lines, the customer picked by e-mail (a bound value). */
export const SELECTIVE = `select o.id, o.ordered_at, o.total, l.line_no, l.quantity, l.unit_price
from crm.customers c
join shop.orders o on o.customer_id = c.id
join shop.order_lines l on l.order_id = o.id
where c.email = $1
order by o.id, l.line_no`;

/** Revenue and lines by region over every order line. */
export const FULL = `select c.region, sum(l.quantity * l.unit_price) as revenue, count(*) as lines
from shop.order_lines l
join shop.orders o on o.id = l.order_id
join crm.customers c on c.id = o.customer_id
group by c.region
order by c.region`;

/** The URL of database `name` on the server of `url`. */
export const databaseUrl = (url, name) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

/** The service's config (VDB fedbench over crm_db and shop_db, the SQL door on), in a folder of its own; its path. */
export function writeFederationConfig(url, { memoryLimit, maxSourceRows, shipMaxRows }) {
  const folder = mkdtempSync(join(tmpdir(), 'vdb-bench-federation-'));
  mkdirSync(join(folder, 'bundle', 'vdbs'), { recursive: true });
  writeFileSync(join(folder, 'bundle', 'vdbs', 'fedbench.yaml'), [
    'name: fedbench', 'version: "1"', 'datasource: shop_db', 'schemas:', '  - { name: shop }', '  - { name: crm, datasource: crm_db }',
    'dataRoles:', '  - name: reader', '    grants: [{ resource: shop, allow: [select] }, { resource: crm, allow: [select] }]', '',
  ].join('\n'));
  const configFile = join(folder, 'service.yaml');
  const datasource = (name) => ({ adapter: 'postgres', connection: { connectionString: databaseUrl(url, name) }, pool: { max: 4 } });
  writeFileSync(configFile, JSON.stringify({
    // the full aggregation takes tens of seconds on a loaded machine: no statement time limit gets in the way
    server: { host: '127.0.0.1', port: 0, requestTimeoutMs: 600_000 },
    descriptors: './bundle',
    datasources: { crm_db: datasource('fedbench_crm'), shop_db: datasource('fedbench_shop') },
    auth: { scheme: 'bearer', tokens: [{ token: TOKEN, subject: 'bench', roles: ['reader'] }] },
    runtime: { enabled: false },
    logging: { level: 'warn' },
    sql: { enabled: true, host: '127.0.0.1', port: 0 },
    federation: { memoryLimit, maxSourceRows, ...(shipMaxRows !== undefined && { shipMaxRows }) },
  }));
  return configFile;
}
