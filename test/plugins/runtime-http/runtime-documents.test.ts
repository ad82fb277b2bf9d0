import { readFileSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RUNTIME_DOCUMENT_KINDS, validateRuntimeDocument, type RuntimeDocumentKind } from '../../../core/tasks/runtime-documents.js';
import { taskContext } from '../../../core/tasks/task-context.js';
import {
  ARTIFACT_KINDS, STOP_REASONS, TASK_STATES, type TaskAdvanceDocument, type TaskErrorEnvelope, type TaskSnapshot, type TaskStartDocument,
} from '../../../core/plugin-api/task-documents.js';
import { ANALYST, retailVdb } from '../../core/authorization/authorization-fixtures.js';
import { pendingActions, snapshotFor } from './fake-runtime.js';

const ref = { instanceId: 'i1', vdb: 'retail', version: '1', taskId: 't1' };

function startDocument(): TaskStartDocument {
  return {
    format: 'service-task-start',
    formatVersion: 1,
    taskId: 't1',
    instanceId: 'i1',
    capability: 'answer',
    vdb: { name: 'retail', version: '1' },
    goal: 'revenue by region',
    externalContextId: 'conversation-7',
    externalContext: { contentType: 'application/json', data: { previous: ['a', 1, null] } },
    artifactIds: [],
    // The real derivation, so the schema is checked against what the service sends.
    authorizedContext: structuredClone(taskContext({ vdb: retailVdb, sqlFamily: 'postgres', semanticPackage: undefined }, ANALYST)),
    budgets: {
      maxSteps: 8, maxServiceActions: 16, maxObservationRows: 10000, maxObservationBytes: 1048576,
      maxModelCalls: 8, maxInputTokens: 100000, maxOutputTokens: 20000, maxDurationSeconds: 60,
    },
  };
}

function advanceDocument(): TaskAdvanceDocument {
  return {
    format: 'service-task-advance',
    formatVersion: 1,
    taskId: 't1',
    sequence: 1,
    observations: [
      { actionId: 'a1', status: 'ok', columns: [{ name: 'region', logicalType: 'string' }], rows: [{ region: 'EU' }], rowCount: 1, truncated: false, error: null },
      { actionId: 'a2', status: 'denied', columns: [], rows: [], rowCount: 0, truncated: false, error: { code: 'forbidden_relation', message: 'hr.salaries is not granted' } },
    ],
  };
}

function terminalTaskSnapshot(): TaskSnapshot {
  const { pendingActions: _none, ...snapshot } = snapshotFor(ref);
  return { ...snapshot, usage: { inputTokens: 10, outputTokens: 5, modelCalls: 1, serviceActions: 2, observationRows: 1, observationBytes: 40 }, stop: { reason: 'completed', detail: 'done' } };
}

function errorEnvelope(): TaskErrorEnvelope {
  return { format: 'service-task-error', formatVersion: 1, code: 'runtime_unavailable', message: 'the runtime is unavailable', retryable: true };
}

const documents = suite('runtime documents: JSON Schemas in docs/runtime/');

documents('each schema has its $id and the draft 2020-12 dialect', () => {
  for (const kind of RUNTIME_DOCUMENT_KINDS) {
    const schema = JSON.parse(readFileSync(new URL(`../../../../docs/runtime/${kind}.schema.json`, import.meta.url), 'utf8')) as Record<string, unknown>;
    assert.is(schema['$id'], `https://vdb-service.dev/schemas/runtime/${kind}.schema.json`);
    assert.is(schema['$schema'], 'https://json-schema.org/draft/2020-12/schema');
  }
});

documents('valid documents pass: start, advance, working and terminal runtime snapshots, task snapshot, error', () => {
  assert.equal(validateRuntimeDocument('service-task-start', startDocument()), []);
  assert.equal(validateRuntimeDocument('service-task-start', { ...startDocument(), externalContextId: null, externalContext: null }), []);
  assert.equal(validateRuntimeDocument('service-task-advance', advanceDocument()), []);
  assert.equal(validateRuntimeDocument('service-task-snapshot', snapshotFor(ref)), []);
  assert.equal(validateRuntimeDocument('service-task-snapshot', snapshotFor(ref, { state: 'working', stop: null, artifacts: [], pendingActions: pendingActions(2) })), []);
  const { stop: _stop, ...workingWithoutStop } = snapshotFor(ref, { state: 'working', artifacts: [], pendingActions: pendingActions(1) });
  assert.equal(validateRuntimeDocument('service-task-snapshot', workingWithoutStop), []);
  assert.equal(validateRuntimeDocument('service-task-snapshot', terminalTaskSnapshot()), []);
  assert.equal(validateRuntimeDocument('service-task-error', errorEnvelope()), []);
});

documents('a huge request of observations is still a valid snapshot: limiting it is the service budgets\' job', () => {
  const snapshot = snapshotFor(ref, { state: 'working', stop: null, pendingActions: pendingActions(1000, { maxRows: 1e9 }) });
  assert.equal(validateRuntimeDocument('service-task-snapshot', snapshot), []);
});

documents('validation leaves the document as it was (no defaults filled in)', () => {
  const snapshot = terminalTaskSnapshot();
  const before = structuredClone(snapshot);
  validateRuntimeDocument('service-task-snapshot', snapshot);
  assert.equal(snapshot, before);
  assert.not.ok('pendingActions' in snapshot);
});

/** [kind, what is broken, how, the message expected among the problems] */
const broken: [RuntimeDocumentKind, string, (document: Record<string, any>) => void, string][] = [
  ['service-task-start', 'missing taskId', (d) => { delete d['taskId']; }, 'taskId: is required'],
  ['service-task-start', 'wrong format', (d) => { d['format'] = 'task-start'; }, 'format: must be "service-task-start"'],
  ['service-task-start', 'format version 2', (d) => { d['formatVersion'] = 2; }, 'formatVersion: must be 1'],
  ['service-task-start', 'a credential smuggled in', (d) => { d['callerToken'] = 'secret'; }, 'callerToken: is not allowed'],
  ['service-task-start', 'identity in the context', (d) => { d['authorizedContext']['subject'] = 'ops'; }, 'authorizedContext.subject: is not allowed'],
  ['service-task-start', 'unknown access level', (d) => { d['authorizedContext']['access'] = 'all'; }, 'authorizedContext.access: must be one of complete, restricted, unavailable'],
  ['service-task-start', 'semanticRevision a number', (d) => { d['authorizedContext']['semanticRevision'] = 5; }, 'authorizedContext.semanticRevision: must be string,null'],
  ['service-task-start', 'unknown logical type', (d) => { d['authorizedContext']['relations'][0]['columns'][0]['logicalType'] = 'text'; }, 'authorizedContext.relations[0].columns[0].logicalType: must be one of string, integer'],
  ['service-task-start', 'external context not JSON', (d) => { d['externalContext']['contentType'] = 'text/plain'; }, 'externalContext.contentType: must be "application/json"'],
  ['service-task-start', 'negative budget', (d) => { d['budgets']['maxObservationRows'] = -1; }, 'budgets.maxObservationRows: must be >= 0'],
  ['service-task-start', 'budget missing', (d) => { delete d['budgets']['maxSteps']; }, 'budgets.maxSteps: is required'],
  ['service-task-advance', 'sequence 0', (d) => { d['sequence'] = 0; }, 'sequence: must be >= 1'],
  ['service-task-advance', 'unknown status', (d) => { d['observations'][0]['status'] = 'maybe'; }, 'observations[0].status: must be one of ok, denied, failed'],
  ['service-task-advance', 'fractional rowCount', (d) => { d['observations'][0]['rowCount'] = 1.5; }, 'observations[0].rowCount: must be integer'],
  ['service-task-advance', 'error left out', (d) => { delete d['observations'][1]['error']; }, 'observations[1].error: is required'],
  ['service-task-snapshot', 'unknown state', (d) => { d['state'] = 'thinking'; }, 'state: must be one of working, input_required, completed'],
  ['service-task-snapshot', 'artifact data not Base64', (d) => { d['artifacts'][0]['content']['data'] = 'not base64!'; }, 'artifacts[0].content.data: must be Base64 (RFC 4648, padded)'],
  ['service-task-snapshot', 'unknown artifact kind', (d) => { d['artifacts'][0]['kind'] = 'image'; }, 'artifacts[0].kind: must be one of answer, table, query, report, log'],
  ['service-task-snapshot', 'negative usage', (d) => { d['usage']['inputTokens'] = -1; }, 'usage.inputTokens: must be >= 0'],
  ['service-task-snapshot', 'unknown usage counter', (d) => { d['usage']['cost'] = 3; }, 'usage.cost: is not allowed'],
  ['service-task-snapshot', 'usage counter missing', (d) => { delete d['usage']['modelCalls']; }, 'usage.modelCalls: is required'],
  ['service-task-snapshot', 'stop left out once stopped', (d) => { delete d['stop']; }, 'stop: is required'],
  ['service-task-snapshot', 'unknown stop reason', (d) => { d['stop']['reason'] = 'bored'; }, 'stop.reason: must be one of completed'],
  ['service-task-snapshot', 'wrong task id type', (d) => { d['task']['taskId'] = 7; }, 'task.taskId: must be string'],
  ['service-task-snapshot', 'action of another kind', (d) => { d['state'] = 'working'; d['stop'] = null; d['pendingActions'] = [{ ...pendingActions(1)[0], kind: 'delete' }]; }, 'pendingActions[0].kind: must be one of query, semanticQuery'],
  ['service-task-snapshot', 'action of zero rows', (d) => { d['state'] = 'working'; d['stop'] = null; d['pendingActions'] = pendingActions(1, { maxRows: 0 }); }, 'pendingActions[0].maxRows: must be >= 1'],
  ['service-task-snapshot', 'actions after the end', (d) => { d['pendingActions'] = pendingActions(1); }, 'pendingActions: must NOT have more than 0 items'],
  ['service-task-error', 'retryable as text', (d) => { d['retryable'] = 'yes'; }, 'retryable: must be boolean'],
  ['service-task-error', 'code not snake_case', (d) => { d['code'] = 'Bad Code'; }, 'code: must be a match of ^[a-z][a-z0-9_]*$'],
];

const valid: Record<RuntimeDocumentKind, () => object> = {
  'service-task-start': startDocument,
  'service-task-advance': advanceDocument,
  'service-task-snapshot': () => snapshotFor(ref),
  'service-task-error': errorEnvelope,
};

for (const [kind, what, breakIt, expected] of broken) {
  documents(`${kind}: ${what} fails with "${expected}"`, () => {
    const document = structuredClone(valid[kind]()) as Record<string, any>;
    breakIt(document);
    const problems = validateRuntimeDocument(kind, document);
    assert.ok(problems.some((problem) => problem.startsWith(expected)), `problems: ${JSON.stringify(problems)}`);
  });
}

documents('something that is no object fails at the root', () => {
  assert.equal(validateRuntimeDocument('service-task-snapshot', null), ['(root): must be object']);
  assert.equal(validateRuntimeDocument('service-task-advance', []), ['(root): must be object']);
});

documents('the schemas\' enums are the vocabulary of core/plugin-api/task-documents.ts', () => {
  const snapshot = JSON.parse(readFileSync(new URL('../../../../docs/runtime/service-task-snapshot.schema.json', import.meta.url), 'utf8')) as {
    properties: { state: { enum: string[] }; artifacts: { items: { properties: { kind: { enum: string[] } } } }; stop: { properties: { reason: { enum: string[] } } } };
  };
  assert.equal(snapshot.properties.state.enum, [...TASK_STATES]);
  assert.equal(snapshot.properties.artifacts.items.properties.kind.enum, [...ARTIFACT_KINDS]);
  assert.equal(snapshot.properties.stop.properties.reason.enum, [...STOP_REASONS]);
});

documents.run();
