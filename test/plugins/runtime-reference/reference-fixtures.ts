/**
 * A real authorized context of the demo (retail version 1: the compiled semantic package and the catalog,
 * as the running service serves them), start and advance documents, and observations made by running a
 * pending query on the demo database, as the service would.
 */
import type { AuthorizedRelation } from '../../../core/plugin-api/task-documents.js';
import { DEFAULT_BUDGETS } from '../../../core/config/config-loader.js';
import type { SemanticPackage } from '../../../core/plugin-api/semantic-package.js';
import type { RuntimeTaskRef } from '../../../core/plugin-api/runtime-transport.js';
import type {
  Artifact, AuthorizedContext, Observation, PendingAction, RuntimeSnapshot, TaskAdvanceDocument, TaskStartDocument,
} from '../../../core/plugin-api/task-documents.js';
import type { SemanticQuery } from '../../../core/plugin-api/semantic-query.js';
import { JoinPlanner } from '../../../core/semantic-query/join-planner.js';
import { ModelIndex } from '../../../core/semantic-query/model-index.js';
import { compileQuery } from '../../../core/semantic-query/query-compiler.js';
import { readSemanticQuery } from '../../../core/semantic-query/query-input.js';
import { bindings } from '../../../core/semantic-query/sql-writer.js';
import { sharedPglite } from '../../support/shared-pglite.js';
import { FAMILY_DIALECTS } from '../../support/family-dialects.js';
import { startTestService } from '../../support/test-service.js';

interface CatalogAnswer {
  name: string;
  version: string;
  catalogRevision: string;
  access: AuthorizedContext['access'];
  relations: (AuthorizedRelation & { columns: (AuthorizedRelation['columns'][number] & { nativeType: string })[] })[];
  functions: AuthorizedContext['functions'];
}

let loading: Promise<AuthorizedContext> | undefined;
/** The demo's package, kept to compile semantic actions as the service would. */
let demoPackage: SemanticPackage | undefined;

/** The context of the demo's `ops` user (roles admin and clerk: all of schema sales), fetched once per process. */
export function retailContext(): Promise<AuthorizedContext> {
  loading ??= fetchContext();
  return loading.then((context) => structuredClone(context));
}

async function fetchContext(): Promise<AuthorizedContext> {
  const service = await startTestService();
  try {
    const packageResponse = await service.request('/api/v1/admin/semantic/vdbs/retail/versions/1/package');
    const catalogResponse = await service.request('/api/v1/vdbs/retail/versions/1/catalog');
    if (packageResponse.status !== 200 || catalogResponse.status !== 200) throw new Error(`package ${packageResponse.status}, catalog ${catalogResponse.status}`);
    const semanticPackage = (await packageResponse.json()) as SemanticPackage;
    demoPackage = semanticPackage;
    // The ETag is the quoted package digest.
    const digest = (packageResponse.headers.get('etag') ?? '').replaceAll('"', '');
    const catalog = (await catalogResponse.json()) as CatalogAnswer;
    return {
      vdb: { name: catalog.name, version: catalog.version },
      catalogRevision: catalog.catalogRevision,
      sqlFamily: 'postgres',
      semanticRevision: digest,
      access: catalog.access,
      relations: catalog.relations.map(({ schema, name, kind, columns, primaryKey, foreignKeys }) => ({
        // the catalog route names no datasource: the demo's retail VDB has one
        schema, name, datasource: 'retail_db', kind, primaryKey, foreignKeys,
        columns: columns.map(({ name: column, logicalType, nullable }) => ({ name: column, logicalType, nullable })),
      })),
      functions: catalog.functions,
      semantic: {
        packageDigest: digest,
        datasets: semanticPackage.datasets,
        relationships: semanticPackage.relationships,
        metrics: semanticPackage.metrics,
      },
    };
  } finally {
    await service.close();
  }
}

export function refOf(taskId: string): RuntimeTaskRef {
  return { instanceId: 'test-1', vdb: 'retail', version: '1', taskId };
}

export function startDocument(ref: RuntimeTaskRef, goal: string, context: AuthorizedContext, overrides: Partial<TaskStartDocument> = {}): TaskStartDocument {
  return {
    format: 'service-task-start',
    formatVersion: 1,
    taskId: ref.taskId,
    instanceId: ref.instanceId,
    capability: 'answer',
    vdb: { name: ref.vdb, version: ref.version },
    goal,
    externalContextId: null,
    externalContext: null,
    artifactIds: [],
    authorizedContext: context,
    budgets: DEFAULT_BUDGETS,
    ...overrides,
  };
}

/** A semantic query compiled against the demo package, as the service compiles a `semanticQuery` action. */
export async function compiledDemoQuery(query: SemanticQuery): Promise<{ sql: string; params: unknown[] }> {
  await retailContext();
  const model = new ModelIndex(demoPackage as SemanticPackage);
  const read = readSemanticQuery(query);
  const plan = compileQuery(model, new JoinPlanner(model), FAMILY_DIALECTS.postgres, read);
  return { sql: plan.sql, params: bindings(plan.params, read) };
}

/** The statement an action runs: its SQL, or its semantic query compiled. */
export async function statementOf(action: PendingAction): Promise<{ sql: string; params: unknown[] }> {
  return action.kind === 'query' ? { sql: action.sql, params: [] } : compiledDemoQuery(action.query);
}

/** Runs the pending action on the demo database, with its row limit, as an `ok` observation. */
export async function observe(action: PendingAction): Promise<Observation> {
  const { sql, params } = await statementOf(action);
  const { columns, rows, rowCount, truncated } = await (await sharedPglite()).query(sql, params, { maxRows: action.maxRows });
  return { actionId: action.actionId, status: 'ok', columns, rows, rowCount, truncated, error: null };
}

export function advanceDocument(ref: RuntimeTaskRef, sequence: number, observations: Observation[]): TaskAdvanceDocument {
  return { format: 'service-task-advance', formatVersion: 1, taskId: ref.taskId, sequence, observations };
}

/** The text of an artifact's Base64 data. */
export function textOf(artifact: Artifact | undefined): string {
  if (!artifact) throw new Error('no such artifact');
  return Buffer.from(artifact.content.data, 'base64').toString('utf8');
}

/** The artifact of `kind` (and content type, when several share a kind). */
export function artifactOf(snapshot: RuntimeSnapshot, kind: Artifact['kind'], contentType?: string): Artifact | undefined {
  return snapshot.artifacts.find((artifact) => artifact.kind === kind && (contentType === undefined || artifact.content.contentType === contentType));
}
