import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../../core/config/config-loader.js';
import { displayPath } from '../../../core/config/yaml-source.js';
import { formatProblem, StartupError, UnavailableError } from '../../../core/plugin-api/errors.js';
import { datasourceOpenFailure } from '../../../core/sql/datasource-open-failure.js';
import { prepareService } from '../../../core/service.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { demoConfig, writeBundle } from '../../support/test-service.js';

const vdb = (body: string) => `name: shop\nversion: "1"\ndatasource: retail_db\n${body}`;

async function problemsOf(files: Record<string, string>, config: Record<string, unknown> = {}): Promise<string[]> {
  const configFile = writeBundle(demoConfig({ descriptors: './descriptors', ...config }), files);
  try {
    const prepared = await prepareService({ configFile, env: {}, datasources: { retail_db: await sharedPglite() }, logDestination: devNull() });
    await prepared.close();
  } catch (error) {
    assert.instance(error, StartupError);
    return (error as StartupError).problems.map((problem) => `${problem.file.replace(/^.*\/descriptors\//, '')}:${problem.line}: ${problem.message}`);
  }
  throw new Error('expected a StartupError');
}

function devNull(): NodeJS.WritableStream {
  return { write: () => true } as unknown as NodeJS.WritableStream;
}

const loader = suite('VDB registry');

loader('a VDB file that breaks the schema is reported at the key', async () => {
  const problems = await problemsOf({ 'descriptors/vdbs/shop.yaml': 'name: shop\nversion: 1\ndatasource: retail_db\nschemas: []\n' });
  assert.equal(problems, [
    'vdbs/shop.yaml:2: version: must be string',
    'vdbs/shop.yaml:4: schemas: must NOT have fewer than 1 items',
  ]);
});

loader('allowFunctions lists function names, unqualified and each once', async () => {
  const problems = await problemsOf({ 'descriptors/vdbs/shop.yaml': vdb('schemas: [{ name: sales }]\nallowFunctions: [pg_size_pretty, pg_catalog.version, pg_size_pretty]\nallowFunction: [x]\n') });
  assert.equal(problems, [
    'vdbs/shop.yaml:6: allowFunction: unknown key',
    'vdbs/shop.yaml:5: allowFunctions[1]: must match pattern "^[A-Za-z_][A-Za-z0-9_$]*$"',
    'vdbs/shop.yaml:5: allowFunctions: must NOT have duplicate items (items ## 2 and 0 are identical)',
  ]);
});

loader('a duplicate name and version names both files', async () => {
  const body = vdb('schemas: [{ name: sales }]\n');
  const problems = await problemsOf({ 'descriptors/vdbs/a.yaml': body, 'descriptors/vdbs/b.yaml': body });
  assert.is(problems.length, 1);
  assert.match(problems[0] ?? '', /^vdbs\/b\.yaml:1: duplicate VDB shop version 1: already defined in \S*descriptors\/vdbs\/a\.yaml$/);
});

loader('an unknown datasource is reported where it is named', async () => {
  const problems = await problemsOf({ 'descriptors/vdbs/shop.yaml': vdb('schemas:\n  - { name: sales }\n  - { name: stock, datasource: erp }\n') });
  assert.equal(problems, ['vdbs/shop.yaml:6: unknown datasource "erp" (not under datasources in the config)']);
});

loader('an unreachable datasource is a startup error at its connection in the config, with host and port, once', async () => {
  const vdbFile = 'name: shop\nversion: "1"\ndatasource: erp\nschemas: [{ name: stock }]\n';
  const problems = await problemsOf(
    { 'descriptors/vdbs/shop.yaml': vdbFile, 'descriptors/vdbs/shop-2.yaml': vdbFile.replace('"1"', '"2"') },
    { datasources: { retail_db: { adapter: 'pglite' }, erp: { adapter: 'postgres', connection: { connectionString: 'postgres://app:pa55word@127.0.0.1:1/erp' } } } },
  );
  assert.equal(problems.map((problem) => problem.replace(/^\S*\/service\.yaml:/, 'service.yaml:')), [
    'service.yaml:12: datasources.erp.connection: cannot connect to the server at 127.0.0.1:1: connection refused (ECONNREFUSED)',
  ]);
});

loader('a database that does not exist is named, at the datasource in the config', async () => {
  const connection = { host: 'db.internal', port: 5432, user: 'app', password: 'pa55word', database: 'erp' };
  const configFile = writeBundle(demoConfig({ datasources: { retail_db: { adapter: 'pglite' }, erp: { adapter: 'postgres', connection } } }));
  const loaded = loadConfig(configFile, {});
  const missing = Object.assign(new Error('database "erp" does not exist'), { code: '3D000' });
  const error = datasourceOpenFailure(loaded, 'erp', new UnavailableError('datasource_unavailable', 'datasource "erp" is unavailable: could not connect (3D000)', { cause: missing }));
  assert.equal(error.problems.map(formatProblem), [`${displayPath(configFile)}:${loaded.source.locate(['datasources', 'erp', 'connection']).line}: datasources.erp.connection: database "erp" does not exist on db.internal:5432 (3D000)`]);
  const refused = datasourceOpenFailure(loaded, 'erp', Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' }));
  assert.match(refused.message, /datasources\.erp\.connection: the server at db\.internal:5432 refused user "app": authentication failed \(28P01\)$/);
  assert.not.match(`${error.message}${refused.message}`, /pa55word/);
});

loader('a schema or an included relation missing from the datasource is reported', async () => {
  const problems = await problemsOf({ 'descriptors/vdbs/shop.yaml': vdb('schemas:\n  - { name: sales, include: [orders, invoices] }\n  - { name: nowhere }\n') });
  assert.equal(problems, [
    'vdbs/shop.yaml:5: relation "sales.invoices" not found in datasource "retail_db"',
    'vdbs/shop.yaml:6: schema "nowhere" not found in datasource "retail_db"',
  ]);
});

loader('an unknown adapter is reported in service.yaml', async () => {
  const configFile = writeBundle(demoConfig({ datasources: { retail_db: { adapter: 'db2' } } }));
  try {
    await prepareService({ configFile, env: {}, logDestination: devNull() });
    assert.unreachable('expected a StartupError');
  } catch (error) {
    assert.match((error as Error).message, /service\.yaml:\d+: datasources\.retail_db\.adapter: unknown adapter "db2" \(installed: .*pglite.*\)/);
  }
});

loader.run();
