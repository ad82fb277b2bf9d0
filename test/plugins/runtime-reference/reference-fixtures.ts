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
import { sharedPglite } from '../../support/shared-pglite.js';
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
        schema, name, kind, primaryKey, foreignKeys,
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

/** Runs the pending query on the demo database, with its row limit, as an `ok` observation. */
export async function observe(action: PendingAction): Promise<Observation> {
  const { columns, rows, rowCount, truncated } = await (await sharedPglite()).query(action.sql, [], { maxRows: action.maxRows });
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
