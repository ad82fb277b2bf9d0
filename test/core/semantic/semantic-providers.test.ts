import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { scaffoldModule } from '../../../core/commands/scaffold-command.js';
import { ossieSchemaProblem } from '../../support/ossie-models.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import type { VirtualDatabase } from '../../../core/plugin-api/vdb.js';
import { httpProvider } from '../../../plugins/semantic-http/http-provider.js';
import { serveFolder, type ServeOptions } from '../../support/fixture-server.js';
import {
  activationContext, moduleBundleFiles, postgresDialect, retailCatalog, sha256Of, shopDocument, vdbFromFile, writeTempBundle,
} from '../../support/semantic-test-support.js';

const providers = suite('semantic providers: http, catalog, and the scaffold');

/** A bundle with the shop module, and its VDB pointed at the same module through the http provider. */
async function overHttp(serve: ServeOptions = {}, uri = (server: string) => `${server}/semantic/shop/`) {
  const files = moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } });
  const dir = writeTempBundle(files);
  const server = await serveFolder(dir, serve);
  const vdb = vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml'));
  vdb.semantic = { enabled: true, provider: { id: 'http', uri: uri(server.url), sha256: sha256Of(files['semantic/shop/manifest.yaml'] as string) } };
  try {
    return { activation: await activateVdb(vdb, activationContext(dir)), requests: server.requests, url: server.url };
  } finally {
    await server.close();
  }
}

providers('http: a module served over HTTP activates, each file fetched once', async () => {
  const { activation, requests } = await overHttp();
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  assert.equal(requests, ['/semantic/shop/manifest.yaml', '/semantic/shop/shop.osi.yaml']);
});

providers('http: the uri may name the manifest itself', async () => {
  const { activation } = await overHttp({}, (server) => `${server}/semantic/shop/manifest.yaml`);
  assert.is(activation.state, 'active');
});

providers('http: a transient 503 is retried, then the module activates', async () => {
  const { activation, requests } = await overHttp({ failFirst: 1 });
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  assert.equal(requests.slice(0, 2), ['/semantic/shop/manifest.yaml', '/semantic/shop/manifest.yaml']);
});

providers('http: a server that does not answer in time is unreachable after the retries', async () => {
  const started = Date.now();
  const { activation, url } = await overHttp({ delayMs: 3000 });
  assert.is(activation.state, 'invalid');
  assert.is(activation.diagnostics[0]?.code, 'provider.unreachable');
  assert.is(activation.diagnostics[0]?.message, `${url}/semantic/shop/manifest.yaml: no answer within 500 ms (2 attempts)`);
  assert.ok(Date.now() - started < 2500, 'the timeout cut each attempt short');
});

providers('http: a missing document is module.document_missing, named by its URL', async () => {
  const files = moduleBundleFiles({ documents: { 'shop.osi.yaml': shopDocument() } });
  const dir = writeTempBundle({ ...files, 'semantic/shop/shop.osi.yaml': '' });
  const server = await serveFolder(join(dir, 'missing-docs'), {});
  await server.close();
  const only = await serveFolder(dir, {});
  try {
    const vdb = vdbFromFile(join(dir, 'vdbs', 'shop-1.yaml'));
    vdb.semantic = { enabled: true, provider: { id: 'http', uri: `${only.url}/semantic/shop/`, sha256: sha256Of(files['semantic/shop/manifest.yaml'] as string) } };
    const withoutDocument = httpProvider('http', { timeoutMs: 500, retries: 0 });
    const activation = await activateVdb(vdb, activationContext(dir, {
      provider: () => ({ ...withoutDocument, open: async (request) => {
        const reader = await withoutDocument.open(request);
        return { ...reader, read: (path) => (path === 'shop.osi.yaml' ? Promise.resolve(undefined) : reader.read(path)) };
      } }),
    }));
    assert.equal({ code: activation.diagnostics[0]?.code, document: activation.diagnostics[0]?.document }, {
      code: 'module.document_missing', document: `${only.url}/semantic/shop/manifest.yaml`,
    });
  } finally {
    await only.close();
  }
});

providers('http: plain http off the loopback interface, and credentials in the URL, are refused before any request', async () => {
  const provider = httpProvider('http', { timeoutMs: 500, retries: 0 });
  const request = { mediaType: 'application/vnd.vdb.semantic-module+yaml', descriptors: '/nowhere', vdb: {} as VirtualDatabase, dialectOf: () => postgresDialect };
  for (const [uri, reason] of [['http://models.example/retail/', /use https/], ['https://user:secret@models.example/retail/', /credentials/], ['not a url', /not a URL/]] as const) {
    try {
      await provider.open({ ...request, uri });
      assert.unreachable(`${uri} was accepted`);
    } catch (error) {
      assert.is((error as { code?: string }).code, 'provider.uri_invalid');
      assert.match((error as Error).message, reason);
    }
  }
});

/** The retail catalog as a VDB whose semantic reference uses the catalog provider. */
function catalogVdb(uri: string, sha256: string): { vdb: VirtualDatabase; dir: string } {
  const dir = writeTempBundle({ 'vdbs/retail.yaml': 'name: retail\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n' });
  const vdb = vdbFromFile(join(dir, 'vdbs', 'retail.yaml'));
  vdb.semantic = { enabled: true, provider: { id: 'catalog', uri, sha256 } };
  return { vdb, dir };
}

providers('catalog: derives datasets from relations, fields with logical types, relationships from foreign keys', async () => {
  const probe = catalogVdb('catalog:', 'f'.repeat(64));
  const mismatch = await activateVdb(probe.vdb, activationContext(probe.dir));
  assert.is(mismatch.diagnostics[0]?.code, 'module.digest_mismatch');
  // The diagnostic tells the digest to pin, which is how a deployment adopts a catalog-derived model.
  const actual = /has sha256 ([0-9a-f]{64})/.exec(mismatch.diagnostics[0]?.message ?? '')?.[1] ?? '';
  const { vdb, dir } = catalogVdb('catalog:', actual);
  const activation = await activateVdb(vdb, activationContext(dir));
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const pkg = activation.package?.document;
  assert.equal(pkg?.module, { name: 'retail-catalog', version: '1', namespace: 'retail' });
  assert.equal(pkg?.datasets.map((dataset) => dataset.name), ['customer_order_totals', 'customers', 'order_lines', 'orders', 'products']);
  const orders = pkg?.datasets.find((dataset) => dataset.name === 'orders');
  assert.equal(orders?.fields.map((field) => `${field.name}:${field.logicalType}:${field.isTime}`), [
    'id:integer:false', 'customer_id:integer:false', 'status:string:false', 'ordered_at:timestamp:true', 'total:decimal:false', 'notes:json:false',
  ]);
  assert.equal(pkg?.relationships.map((relationship) => `${relationship.name}:${relationship.from}->${relationship.to}`), [
    'order_lines_order_id_fkey:retail.order_lines->retail.orders',
    'order_lines_product_id_fkey:retail.order_lines->retail.products',
    'orders_customer_id_fkey:retail.orders->retail.customers',
  ]);
  assert.equal(pkg?.metrics, []);
});

providers('catalog: names that differ only in case, or that the OSI Foundation reserves, still give a model that activates', async () => {
  const withOddNames = (uri: string, sha256: string) => {
    const entry = catalogVdb(uri, sha256);
    const relations = entry.vdb.catalog.relations;
    const orders = relations.find((relation) => relation.name === 'orders');
    const products = relations.find((relation) => relation.name === 'products');
    if (!orders || !products) throw new Error('retail catalog changed');
    relations.push({ ...orders, name: 'Orders', foreignKeys: [] });
    products.columns = [...products.columns, { ...products.columns[1]!, name: 'filter' }];
    return entry;
  };
  const probe = withOddNames('catalog:', 'f'.repeat(64));
  const actual = /has sha256 ([0-9a-f]{64})/.exec((await activateVdb(probe.vdb, activationContext(probe.dir))).diagnostics[0]?.message ?? '')?.[1] ?? '';
  const { vdb, dir } = withOddNames('catalog:', actual);
  const activation = await activateVdb(vdb, activationContext(dir));
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  const names = activation.package?.document.datasets.map((dataset) => dataset.name) ?? [];
  assert.is(new Set(names.map((name) => name.toLowerCase())).size, 6, `one dataset per relation, names unique without case: ${names.join(', ')}`);
  const products = activation.package?.document.datasets.find((dataset) => dataset.name === 'products');
  assert.ok(products?.fields.some((field) => field.name === 'filter_' && field.column === 'filter'));
});

providers('catalog: an unknown schema in the uri is refused', async () => {
  const { vdb, dir } = catalogVdb('catalog:stock', 'f'.repeat(64));
  const activation = await activateVdb(vdb, activationContext(dir));
  assert.equal({ code: activation.diagnostics[0]?.code, message: activation.diagnostics[0]?.message }, {
    code: 'provider.uri_invalid', message: 'stock is not a schema of VDB retail 1',
  });
});

providers('scaffold: writes the catalog model as a bundle module whose printed reference activates', async () => {
  const dir = writeTempBundle({ 'vdbs/retail.yaml': 'name: retail\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n' });
  const vdb = vdbFromFile(join(dir, 'vdbs', 'retail.yaml'), retailCatalog());
  const result = await scaffoldModule(vdb, () => postgresDialect, dir);
  assert.is(result.directory, join(dir, 'semantic', 'retail-1'));
  assert.ok(existsSync(join(result.directory, 'manifest.yaml')) && existsSync(join(result.directory, 'retail.osi.yaml')));
  const text = readFileSync(join(result.directory, 'retail.osi.yaml'), 'utf8');
  assert.match(text, /^# Derived from the catalog of VDB retail version 1/);
  // An Apache Ossie document: its version, Ossie's keys only (Ossie's own JSON Schema accepts it).
  const document = parse(text) as { version: string; namespace?: string; binding?: unknown };
  assert.is(document.version, '0.2.0.dev0');
  assert.is(ossieSchemaProblem(document.version, document), undefined);
  assert.not.match(text, /logical_type|binding|namespace|access_modifier/);
  const reference = (parse(result.reference) as { semantic: VirtualDatabase['semantic'] }).semantic;
  assert.is(reference?.module?.uri, 'semantic/retail-1');
  vdb.semantic = { ...reference, enabled: true };
  const activation = await activateVdb(vdb, activationContext(dir));
  assert.is(activation.state, 'active', JSON.stringify(activation.diagnostics));
  try {
    await scaffoldModule(vdb, () => postgresDialect, dir);
    assert.unreachable('a second scaffold overwrote the module');
  } catch (error) {
    assert.match((error as Error).message, /already holds a manifest.yaml/);
  }
});

providers('scaffold: a column whose bare name is a keyword or has capitals is quoted by the dialect', async () => {
  const catalog = retailCatalog();
  catalog.relations[0]!.columns.push({ name: 'order', logicalType: 'integer', nativeType: 'integer', nullable: true }, { name: 'Region2', logicalType: 'string', nativeType: 'text', nullable: true });
  const dir = writeTempBundle({ 'vdbs/retail.yaml': 'name: retail\nversion: "1"\ndatasource: retail_db\nschemas: [{ name: sales }]\n' });
  const result = await scaffoldModule(vdbFromFile(join(dir, 'vdbs', 'retail.yaml'), catalog), () => postgresDialect, dir);
  const text = readFileSync(join(result.directory, 'retail.osi.yaml'), 'utf8');
  assert.match(text, /expression: '"order"'/);
  assert.match(text, /expression: '"Region2"'/);
  assert.match(text, /expression: region \}/);
});

providers.run();
