import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readYamlFile } from '../../../core/config/yaml-source.js';
import { DIAGNOSTICS } from '../../../core/semantic/diagnostic-codes.js';
import type { SemanticState, SourceLocation } from '../../../core/semantic/semantic-types.js';
import { activateVdb } from '../../../core/semantic/vdb-activation.js';
import { bundleProvider } from '../../../plugins/semantic-bundle/bundle-provider.js';
import { serveFolder, type ServeOptions } from '../../support/fixture-server.js';
import { activationContext, fixturesRoot, retailCatalog, testProviders, vdbFromFile } from '../../support/semantic-test-support.js';

interface Expectation {
  description: string;
  state: SemanticState;
  /** `osiCode` is the Foundation's code the diagnostic carries; absent means none. */
  diagnostic: { code: string; osiCode?: string; severity: string; document: string; location: SourceLocation; target: string } | null;
  /** `duplicateSchema`: a second schema of the retail catalog holding the same relations as `sales`. */
  harness?: { serve?: ServeOptions; maxFileBytes?: number; customersDatasource?: string; duplicateSchema?: string };
}

const casesRoot = join(fixturesRoot, 'cases');
const cases = readdirSync(casesRoot).sort().map((name) => ({
  name,
  dir: join(casesRoot, name),
  expect: readYamlFile(join(casesRoot, name, 'expect.yaml')).value as Expectation,
}));

const fixtures = suite('semantic diagnostics: one fixture module per code');

/** Activates the fixture's VDB against the retail catalog; `{{server}}` becomes a local server serving the folder. */
async function activateCase(dir: string, expect: Expectation) {
  const catalog = retailCatalog();
  const moved = expect.harness?.customersDatasource;
  if (moved) catalog.relations = catalog.relations.map((relation) => (relation.name === 'customers' ? { ...relation, datasource: moved } : relation));
  const duplicate = expect.harness?.duplicateSchema;
  if (duplicate) {
    catalog.schemas = [...catalog.schemas, duplicate];
    catalog.relations = [...catalog.relations, ...catalog.relations.map((relation) => ({ ...relation, schema: duplicate }))];
  }
  const vdb = vdbFromFile(join(dir, 'vdbs', 'shop.yaml'), catalog);
  const providers = testProviders();
  if (expect.harness?.maxFileBytes) providers.set('bundle', bundleProvider('bundle', expect.harness.maxFileBytes));
  const server = vdb.semantic?.provider?.uri.includes('{{server}}') ? await serveFolder(dir, expect.harness?.serve) : undefined;
  try {
    if (server && vdb.semantic?.provider) vdb.semantic.provider.uri = vdb.semantic.provider.uri.replace('{{server}}', server.url);
    const activation = await activateVdb(vdb, activationContext(dir, { provider: (id) => providers.get(id) }));
    return { activation, server: server?.url };
  } finally {
    await server?.close();
  }
}

for (const { name, dir, expect } of cases) {
  fixtures(`${name}: ${expect.description}`, async () => {
    const { activation, server } = await activateCase(dir, expect);
    // An error fixture names the first error: a warning of an earlier stage may precede it (a many-to-many
    // relationship is warned about in binding, a field across it is refused in compilation).
    const first = expect.diagnostic?.severity === 'error' ? activation.diagnostics.find((diagnostic) => diagnostic.severity === 'error') : activation.diagnostics[0];
    assert.is(activation.state, expect.state, `state (diagnostics: ${JSON.stringify(activation.diagnostics.map((d) => d.message))})`);
    if (!expect.diagnostic) {
      assert.equal(activation.diagnostics, []);
      return;
    }
    const expected = { ...expect.diagnostic, osiCode: expect.diagnostic.osiCode ?? null, target: expect.diagnostic.target.replace('{{server}}', server ?? '') };
    assert.ok(first, 'a diagnostic');
    assert.equal(
      { code: first.code, osiCode: first.osiCode, severity: first.severity, document: first.document, location: first.location, target: first.target },
      expected,
      first.message,
    );
    assert.ok(first.message.length > 0);
    assert.is(first.remediation, DIAGNOSTICS[first.code as keyof typeof DIAGNOSTICS].remediation);
    assert.is(activation.package === null, expect.state !== 'active', 'a package exists exactly when the VDB is active');
  });
}

fixtures('every diagnostic code has a fixture (activation.internal_error is forced in the pipeline tests)', () => {
  const covered = new Set(cases.map((entry) => entry.expect.diagnostic?.code).filter((code) => code !== undefined));
  const missing = Object.keys(DIAGNOSTICS).filter((code) => code !== 'activation.internal_error' && !covered.has(code));
  assert.equal(missing, []);
});

fixtures.run();
