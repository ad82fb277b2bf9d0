import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import type { Datasource } from '../../../core/plugin-api/sql-dialect.js';
import { skippedHere } from '../../support/backends.js';
import { samplesOf, sampleValue } from '../../support/prometheus-text.js';
import { dropSyncedRoles } from '../../support/synced-roles.js';
import { ANALYST_TOKEN, demoConfig, projectRoot, startTestService, type TestService } from '../../support/test-service.js';
import { canonicalValue, jsonValue, logicalOid, logicalTypeOf, TEXT_PARSERS, textAnswer, type Oracle, type TextAnswer } from './corpus-oracle.js';
import { shopSetup, type Family, type ShopSchema } from './shop-data.js';

export interface CorpusEntry {
  id: string;
  sql: string;
  /** Whether the statement orders its rows completely: the order is compared too. */
  ordered?: boolean;
  /** The words the refusal of a statement the plan may not evaluate names; absent: it must answer. */
  refused?: string[];
}

export const CORPUS: readonly CorpusEntry[] = parse(readFileSync(join(projectRoot, 'test/fixtures/federation/corpus.yaml'), 'utf8')) as CorpusEntry[];

/** One datasource of a pair: where one of the two schemas lives. */
export interface PairSide {
  family: Family;
  /** The datasource as a service config writes it. */
  config: Record<string, unknown>;
  open(): Promise<Datasource>;
  /** Undoes what `open` opened once the suite is done (the schema's tables are dropped before). */
  release(datasource: Datasource): Promise<void>;
}

/** Two datasources (`fed_crm` on one, `fed_shop` on the other) and the oracle holding both. */
export interface CorpusPair {
  name: string;
  /** Why the pair cannot run here (a server is not configured). */
  skip?: string | undefined;
  crm: PairSide;
  shop: PairSide;
  /** The oracle, filled with `setup` (both schemas, PostgreSQL's types). */
  oracle(setup: readonly string[]): Promise<Oracle>;
  /**
   * The service's `federation` config. `shipMaxRows: 0`: every statement is answered by the engine; else
   * the statements whose other side is read as few rows are answered by the PostgreSQL side (shipping),
   * and at least `shipped` of them must be.
   */
  federation?: Record<string, unknown>;
  shipped?: number;
}

/** The VDB the corpus runs on: each schema on its datasource; the analyst reads both. */
const CORPUS_VDB = `
name: fedshop
version: "1"
datasource: shop_db
schemas:
  - { name: fed_crm, datasource: crm_db }
  - { name: fed_shop }
dataRoles:
  - name: analyst
    grants:
      - { resource: fed_crm, allow: [select] }
      - { resource: fed_shop, allow: [select] }
`;

interface Context {
  service: TestService;
  crm: Datasource;
  shop: Datasource;
  oracle: Oracle;
  door: pg.Client;
}

/** The query definition of an entry: the HTTP query route runs the same statement. */
function definition(entry: CorpusEntry): [string, string] {
  const body = entry.sql.trim().split('\n').map((line) => `  ${line}`).join('\n');
  return [`bundle/queries/${endpointName(entry)}.yaml`, `---\ntype: sqlDirect\nvirtualDatabase: fedshop\nquery: |\n${body}\n`];
}

const endpointName = (entry: CorpusEntry) => `corpus_${entry.id.replace(/-/g, '_')}`;

/** The service's last error log line, for a failure's message. */
const lastError = (service: TestService) => [...service.logs].reverse().find((line) => /"level":(50|60)/.test(line))?.slice(0, 1500) ?? 'no error logged';

/** Rows as compared: canonical values, sorted when the statement does not order them. */
function comparable(answer: TextAnswer, ordered: boolean): string[] {
  const rows = answer.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, answer.types[index] ?? 0))));
  return ordered ? rows : [...rows].sort();
}

async function fill(datasource: Datasource, family: Family, schema: ShopSchema): Promise<void> {
  for (const statement of shopSetup(family, schema)) await datasource.query(statement, []);
}

async function drop(datasource: Datasource, family: Family, schema: ShopSchema): Promise<void> {
  await datasource.query(family === 'postgres' ? `drop schema if exists ${schema} cascade` : `drop database if exists ${schema}`, []);
}

/**
 * The corpus over one pair, through the SQL door of the real service as the analyst (node-postgres, values
 * as text): each answer is the oracle's, or the refusal the entry allows.
 */
export function runCorpusSuite(pair: CorpusPair): void {
  const test = suite<Context>(`federation corpus: ${pair.name}`);
  if (skippedHere(test, pair)) return;

  // uvu reports a failed hook as its tests not passed, without the error: it is printed here
  test.before((context) => setUp(context).catch((error: unknown) => {
    console.error(`federation corpus: ${pair.name}: the setup failed:`, error);
    throw error;
  }));

  async function setUp(context: Context): Promise<void> {
    context.oracle = await pair.oracle([...shopSetup('postgres', 'fed_crm'), ...shopSetup('postgres', 'fed_shop')]);
    context.crm = await pair.crm.open();
    context.shop = await pair.shop.open();
    await fill(context.crm, pair.crm.family, 'fed_crm');
    await fill(context.shop, pair.shop.family, 'fed_shop');
    context.service = await startTestService({
      config: demoConfig({
        descriptors: './bundle', datasources: { crm_db: pair.crm.config, shop_db: pair.shop.config }, sql: { enabled: true, port: 0 }, federation: pair.federation ?? {},
      }),
      // a statement the plan may refuse is asked through the door only: as a definition it would stop startup
      files: { 'bundle/vdbs/fedshop.yaml': CORPUS_VDB, ...Object.fromEntries(CORPUS.filter((entry) => entry.refused === undefined).map(definition)) },
      datasources: { crm_db: context.crm, shop_db: context.shop },
    });
    const { port } = context.service.sqlAddress as { port: number };
    context.door = new pg.Client({ host: '127.0.0.1', port, database: 'fedshop@1', user: 'tester', password: ANALYST_TOKEN, types: TEXT_PARSERS });
    await context.door.connect();
  }

  test.after(async ({ service, door, crm, shop, oracle }) => {
    try {
      await door?.end();
      await service?.close();
      const sides = ([[crm, pair.crm, 'fed_crm'], [shop, pair.shop, 'fed_shop']] as const).filter(([datasource]) => datasource !== undefined);
      for (const [datasource, side, schema] of sides) await drop(datasource as Datasource, side.family, schema);
      // two databases of one server share its roles: a role goes once its privileges in both are gone
      const again: Datasource[] = [];
      for (const [datasource] of sides) await dropSyncedRoles(service, datasource as Datasource).catch(() => again.push(datasource as Datasource));
      for (const datasource of again) await dropSyncedRoles(service, datasource);
      for (const [datasource, side] of sides) await side.release(datasource as Datasource);
    } finally {
      await oracle?.close();
    }
  });

  test(`the corpus holds at least 40 statements, each of them once`, () => {
    assert.ok(CORPUS.length >= 40, `${CORPUS.length} statements`);
    assert.is(new Set(CORPUS.map((entry) => entry.id)).size, CORPUS.length);
  });

  for (const entry of CORPUS) {
    const ordered = entry.ordered === true;
    test(`${entry.id}: ${entry.refused ? `the oracle's answer, or refused naming ${entry.refused.join(', ')}` : "the oracle's answer"}, through the SQL door`, async ({ door, oracle, service }) => {
      const expected = await oracle.run(entry.sql);
      const answer = await textAnswer(door, entry.sql).catch((error: { code?: string; message: string }) => error);
      if ('message' in answer) {
        const refusal = `${answer.code ?? 'no SQLSTATE'}: ${answer.message}`;
        assert.ok(entry.refused !== undefined, `${entry.id} must answer; it failed with ${refusal}; the service logged ${lastError(service)}`);
        assert.is(answer.code, '0A000', refusal);
        for (const word of entry.refused) assert.ok(answer.message.toLowerCase().includes(word.toLowerCase()), `${refusal} does not name ${word}`);
        return;
      }
      assert.equal(answer.types, expected.types.map(logicalOid), `${entry.id}: the columns' types`);
      assert.equal(comparable(answer, ordered), comparable(expected, ordered), `${entry.id}: the rows`);
    });
    if (entry.refused !== undefined) continue;
    test(`${entry.id}: the oracle's answer, through the HTTP query route`, async ({ service, oracle }) => {
      const expected = await oracle.run(entry.sql);
      const response = await service.request(`/api/v1/query/perform/${endpointName(entry)}`, {
        method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
      });
      const body = await response.json() as { columns: { name: string; logicalType: string }[]; rows: Record<string, unknown>[] };
      assert.is(response.status, 200, `${JSON.stringify(body)}; the service logged ${lastError(service)}`);
      assert.equal(body.columns.map((column) => column.logicalType), expected.types.map(logicalTypeOf), `${entry.id}: the columns' logical types`);
      const names = body.columns.map((column) => column.name);
      const rows = body.rows.map((row) => JSON.stringify(names.map((name) => row[name])));
      const wanted = expected.rows.map((row) => JSON.stringify(row.map((value, index) => jsonValue(value, expected.types[index] ?? 0))));
      assert.equal(ordered ? rows : rows.sort(), ordered ? wanted : wanted.sort(), `${entry.id}: the rows`);
    });
  }

  test(`${pair.shipped === undefined ? 'no statement was' : `at least ${pair.shipped} statements were`} answered by shipping the other side's rows`, async ({ service }) => {
    const samples = samplesOf(await (await service.request('/observe/metrics')).text());
    const shipped = sampleValue(samples, 'vdb_federated_shipped_total', { datasource: 'shop_db' });
    if (pair.shipped === undefined) assert.is(shipped, 0);
    else assert.ok(shipped >= pair.shipped, `${shipped} shipped`);
  });

  test.run();
}
