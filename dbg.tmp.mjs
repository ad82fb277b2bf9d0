import { dataStatements, ossieBundleFiles, ossieFixtures, ossieSchema, schemaStatements } from './dist/test/support/ossie-models.js';
import { demoConfig, startTestService } from './dist/test/support/test-service.js';
const fixtures = ossieFixtures().filter((fixture) => fixture.document.semantic_model !== undefined && fixture.schemaProblem === undefined || fixture.name.includes('dbt'));
const models = fixtures.filter((fixture) => !fixture.name.includes('/src/test/'));
const schema = await ossieSchema(models);
const statements = [...schemaStatements(schema, 'postgres'), ...dataStatements(schema, 'postgres')];
const files = {};
for (const [path, text] of Object.entries(ossieBundleFiles(models, 'ossie_db', schema))) files[`bundle/${path}`] = text;
files['bundle/seed/ossie.sql'] = `${statements.join(';\n')};\n`;
const config = demoConfig({ descriptors: './bundle', datasources: { ossie_db: { adapter: 'pglite', init: ['seed/ossie.sql'] } } });
try { const s = await startTestService({ config, files, datasources: {} }); console.log('started'); await s.close(); } catch (e) { console.log('ERR', e.message); }
