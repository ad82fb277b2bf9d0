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

/** The family of a datasource's database: its types and its DDL. */
export type Family = 'postgres' | 'mysql';

export interface CorpusEntry {
  id: string;
  sql: string;
  /** Whether the statement orders its rows completely: the order is compared too. */
  ordered?: boolean;
  /** The words the refusal of a statement the plan may not evaluate names; absent: it must answer. */
  refused?: string[];
  /** The statement's bound values (`$1`…): the SQL door binds them, the query route's body carries them as `v1`…. */
  values?: (string | number | boolean | null)[];
  /** Whether the statement is also asked as a Task API goal (the reference runtime runs a goal that is SQL). */
  task?: boolean;
  /** The SQLSTATE the oracle raises: the service raises it too (the query route answers a 4xx, never a 5xx). */
  error?: string;
}

/**
 * A corpus and the data set it reads: two schemas, the first on one datasource of a pair, the second on the
 * other (the VDB's default), each filled alike on the oracle.
 */
export interface CorpusData {
  /** The VDB's name (and the suite's): `fedshop`. */
  vdb: string;
  /** The corpus's YAML, from the project's root. */
  file: string;
  /** The schema on the pair's first side, and the one on its second. */
  schemas: readonly [string, string];
  /** The statements that create and fill `schema` on a database of `family`. */
  setup(family: Family, schema: string): string[];
  /** The fewest statements the corpus holds. */
  minimum: number;
}

export function corpusOf(data: CorpusData): readonly CorpusEntry[] {
  return parse(readFileSync(join(projectRoot, data.file), 'utf8')) as CorpusEntry[];
}

/** One datasource of a pair: where one of the two schemas lives. */
export interface PairSide {
  family: Family;
  /** The datasource as a service config writes it. */
  config: Record<string, unknown>;
  open(): Promise<Datasource>;
  /** Undoes what `open` opened once the suite is done (the schema's tables are dropped before). */
  release(datasource: Datasource): Promise<void>;
}

/** Two datasources (the data set's first schema on `first`, its second on `second`) and the oracle holding both. */
export interface CorpusPair {
  name: string;
  /** Why the pair cannot run here (a server is not configured). */
  skip?: string | undefined;
  first: PairSide;
  second: PairSide;
  /** The oracle, filled with `setup` (both schemas, PostgreSQL's types). */
  oracle(setup: readonly string[]): Promise<Oracle>;
  /** The service's `federation` config for the pair (docs/configuration.md); the defaults when absent. */
  federation?: Record<string, unknown>;
  /** With shipping on (docs/federation.md#shipping-the-small-side): at least this many answers are shipped; absent, none may be. */
  shipped?: number;
}

/** The VDB the corpus runs on: each schema on its datasource (the second the default); the analyst reads both. */
function corpusVdb(data: CorpusData): string {
  const [first, second] = data.schemas;
  return `
name: ${data.vdb}
version: "1"
datasource: second_db
schemas:
  - { name: ${first}, datasource: first_db }
  - { name: ${second} }
dataRoles:
  - name: analyst
    grants:
      - { resource: ${first}, allow: [select] }
      - { resource: ${second}, allow: [select] }
`;
}

interface Context {
  service: TestService;
  first: Datasource;
  second: Datasource;
  oracle: Oracle;
  door: pg.Client;
}

/** The query definition of an entry: the HTTP query route runs the same statement. */
function definition(entry: CorpusEntry, vdb: string): [string, string] {
  // `$n` is the template's value `vn`, which the route binds
  const body = entry.sql.trim().replace(/\$(\d+)/g, '{{ v$1 }}').split('\n').map((line) => `  ${line}`).join('\n');
  return [`bundle/queries/${endpointName(entry)}.yaml`, `---\ntype: sqlDirect\nvirtualDatabase: ${vdb}\nquery: |\n${body}\n`];
}

const endpointName = (entry: CorpusEntry) => `corpus_${entry.id.replace(/-/g, '_')}`;

/** The service's last error log line, for a failure's message. */
const lastError = (service: TestService) => [...service.logs].reverse().find((line) => /"level":(50|60)/.test(line))?.slice(0, 1500) ?? 'no error logged';

/** Rows as compared: canonical values, sorted when the statement does not order them. */
function comparable(answer: TextAnswer, ordered: boolean): string[] {
  const rows = answer.rows.map((row) => JSON.stringify(row.map((value, index) => canonicalValue(value, answer.types[index] ?? 0))));
  return ordered ? rows : [...rows].sort();
}

async function fill(datasource: Datasource, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await datasource.query(statement, []);
}

async function drop(datasource: Datasource, family: Family, schema: string): Promise<void> {
  await datasource.query(family === 'postgres' ? `drop schema if exists ${schema} cascade` : `drop database if exists ${schema}`, []);
}

/**
 * The corpus over one pair, through the SQL door of the real service as the analyst (node-postgres, values
 * as text): each answer is the oracle's, or the refusal the entry allows.
 */
export function runCorpusSuite(data: CorpusData, pair: CorpusPair): void {
  const test = suite<Context>(`federation corpus ${data.vdb}: ${pair.name}`);
  const corpus = corpusOf(data);
  const [firstSchema, secondSchema] = data.schemas;
  if (skippedHere(test, pair)) return;

  // uvu reports a failed hook as its tests not passed, without the error: it is printed here
  test.before((context) => setUp(context).catch((error: unknown) => {
    console.error(`federation corpus ${data.vdb}: ${pair.name}: the setup failed:`, error);
    throw error;
  }));

  async function setUp(context: Context): Promise<void> {
    context.oracle = await pair.oracle([...data.setup('postgres', firstSchema), ...data.setup('postgres', secondSchema)]);
    context.first = await pair.first.open();
    context.second = await pair.second.open();
    await fill(context.first, data.setup(pair.first.family, firstSchema));
    await fill(context.second, data.setup(pair.second.family, secondSchema));
    const config = demoConfig({
      descriptors: './bundle', datasources: { first_db: pair.first.config, second_db: pair.second.config }, sql: { enabled: true, port: 0 },
      ...(pair.federation && { federation: pair.federation }),
    });
    context.service = await startTestService({
      config,
      // a statement the plan may refuse is asked through the door only: as a definition it would stop startup
      files: {
        [`bundle/vdbs/${data.vdb}.yaml`]: corpusVdb(data),
        ...Object.fromEntries(corpus.filter((entry) => entry.refused === undefined).map((entry) => definition(entry, data.vdb))),
      },
      datasources: { first_db: context.first, second_db: context.second },
    });
    const { port } = context.service.sqlAddress as { port: number };
    context.door = new pg.Client({ host: '127.0.0.1', port, database: `${data.vdb}@1`, user: 'tester', password: ANALYST_TOKEN, types: TEXT_PARSERS });
    await context.door.connect();
  }

  test.after(async ({ service, door, first, second, oracle }) => {
    try {
      await door?.end();
      await service?.close();
      const sides = ([[first, pair.first, firstSchema], [second, pair.second, secondSchema]] as const).filter(([datasource]) => datasource !== undefined);
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

  test(`the corpus holds at least ${data.minimum} statements, each of them once`, () => {
    assert.ok(corpus.length >= data.minimum, `${corpus.length} statements`);
    assert.is(new Set(corpus.map((entry) => entry.id)).size, corpus.length);
  });

  for (const entry of corpus.filter((candidate) => candidate.error !== undefined)) {
    test(`${entry.id}: the oracle's error ${entry.error}, through the SQL door and the query route`, async ({ door, oracle, service }) => {
      const failure = (error: { code?: string; message: string }) => error;
      const expected = await oracle.run(entry.sql, entry.values).then(() => undefined, failure);
      assert.is(expected?.code, entry.error, `the oracle: ${expected?.message ?? 'answered'}`);
      const answer = await textAnswer(door, entry.sql, entry.values).then(() => undefined, failure);
      const response = await service.request(`/api/v1/query/perform/${endpointName(entry)}`, {
        method: 'POST', body: JSON.stringify(Object.fromEntries((entry.values ?? []).map((value, index) => [`v${index + 1}`, value]))),
        headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
      });
      const body = await response.text();
      // both doors' answers in one message: one failing does not hide the other
      const seen = `the SQL door: ${answer?.code ?? 'answered'} ${answer?.message ?? ''}; the query route: ${response.status} ${body}; the service logged ${lastError(service)}`;
      assert.is(answer?.code, entry.error, seen);
      assert.ok(response.status >= 400 && response.status < 500, seen);
    });
  }

  for (const entry of corpus.filter((candidate) => candidate.error === undefined)) {
    const ordered = entry.ordered === true;
    test(`${entry.id}: ${entry.refused ? `the oracle's answer, or refused naming ${entry.refused.join(', ')}` : "the oracle's answer"}, through the SQL door`, async ({ door, oracle, service }) => {
      const expected = await oracle.run(entry.sql, entry.values);
      const answer = await textAnswer(door, entry.sql, entry.values).catch((error: { code?: string; message: string }) => error);
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
      const expected = await oracle.run(entry.sql, entry.values);
      const values = Object.fromEntries((entry.values ?? []).map((value, index) => [`v${index + 1}`, value]));
      const response = await service.request(`/api/v1/query/perform/${endpointName(entry)}`, {
        method: 'POST', body: JSON.stringify(values), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
      });
      const body = await response.json() as { columns: { name: string; logicalType: string }[]; rows: Record<string, unknown>[] };
      assert.is(response.status, 200, `${JSON.stringify(body)}; the service logged ${lastError(service)}`);
      assert.equal(body.columns.map((column) => column.logicalType), expected.types.map(logicalTypeOf), `${entry.id}: the columns' logical types`);
      const names = body.columns.map((column) => column.name);
      const rows = body.rows.map((row) => JSON.stringify(names.map((name) => row[name])));
      const wanted = expected.rows.map((row) => JSON.stringify(row.map((value, index) => jsonValue(value, expected.types[index] ?? 0))));
      assert.equal(ordered ? rows : rows.sort(), ordered ? wanted : wanted.sort(), `${entry.id}: the rows`);
    });
    if (entry.task !== true) continue;
    test(`${entry.id}: the oracle's answer, as a Task API query`, async ({ service, oracle }) => {
      const expected = await oracle.run(entry.sql, entry.values);
      const response = await service.request(`/api/v1/capabilities/answer/vdbs/${data.vdb}/versions/1/tasks`, {
        method: 'POST', body: JSON.stringify({ goal: entry.sql.trim() }), headers: { 'content-type': 'application/json' }, token: ANALYST_TOKEN,
      });
      const snapshot = await response.json() as { state: string; artifacts: { kind: string; content: { contentType: string; data: string } }[] };
      assert.is(snapshot.state, 'completed', `${JSON.stringify(snapshot)}; the service logged ${lastError(service)}`);
      const artifact = snapshot.artifacts.find((one) => one.kind === 'table' && one.content.contentType === 'application/json');
      assert.ok(artifact, JSON.stringify(snapshot));
      const table = JSON.parse(Buffer.from(artifact.content.data, 'base64').toString('utf8')) as { columns: { name: string }[]; rows: Record<string, unknown>[] };
      const names = table.columns.map((column) => column.name);
      const rows = table.rows.map((row) => JSON.stringify(names.map((name) => row[name])));
      const wanted = expected.rows.map((row) => JSON.stringify(row.map((value, index) => jsonValue(value, expected.types[index] ?? 0))));
      assert.equal(ordered ? rows : rows.sort(), ordered ? wanted : wanted.sort(), `${entry.id}: the rows`);
    });
  }

  test(`${pair.shipped === undefined ? 'no statement was' : `at least ${pair.shipped} statements were`} answered by shipping the other side's rows`, async ({ service }) => {
    const samples = samplesOf(await (await service.request('/observe/metrics')).text());
    const shipped = sampleValue(samples, 'vdb_federated_shipped_total', { datasource: 'second_db' });
    if (pair.shipped === undefined) assert.is(shipped, 0);
    else assert.ok(shipped >= pair.shipped, `${shipped} shipped`);
  });

  test.run();
}

/**
 * A pair's corpus twice: with shipping (docs/federation.md#shipping-the-small-side), where at least `shipped`
 * answers come from the PostgreSQL side with the other side's rows sent to it, and with the engine alone.
 */
export function runCorpusBothWays(data: CorpusData, pair: CorpusPair, shipped: number): void {
  runCorpusSuite(data, { ...pair, name: `${pair.name}, shipping`, shipped });
  runCorpusSuite(data, { ...pair, name: `${pair.name}, the engine alone`, federation: { ...pair.federation, shipMaxRows: 0 } });
}
