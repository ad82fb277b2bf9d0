/**
 * Activation of one VDB name+version: acquisition, resolution, validation against the catalog,
 * compilation, package. Resolution and validation need acquired documents; compilation needs a model
 * without errors; within a stage an element that failed is skipped by those that use it. So one mistake
 * is reported once, the first error is its cause, and a package exists only when every stage passed.
 */
import { relative, sep } from 'node:path';
import { readYamlFile, type YamlSource } from '../config/yaml-source.js';
import { messageOf } from '../plugin-api/errors.js';
import type { VirtualDatabase } from '../plugin-api/vdb.js';
import { bindModel, type SourceDefaults } from './catalog-binding.js';
import type { ModuleManifest } from './module-schemas.js';
import type { ActivationStage } from './diagnostic-codes.js';
import { DiagnosticList } from './diagnostic-list.js';
import { ExpressionAnalyzer } from './expression-analysis.js';
import { compileModel } from './model-compilation.js';
import { resolveModel } from './model-resolution.js';
import { resolveMetricReferences } from './metric-references.js';
import { acquireModule, moduleTarget, normalizeReference, siteAt, type AcquiredModule, type ModuleFileSite } from './module-acquisition.js';
import { buildPackage } from './package-builder.js';
import type { ExpressionDialect, SemanticProvider } from '../plugin-api/semantic-provider.js';
import type { ActivationFailurePolicy, CompiledPackage, VdbActivation } from './semantic-types.js';

export interface ActivationDeps {
  /** Absolute path of the descriptor bundle. */
  descriptors: string;
  provider(id: string): SemanticProvider | undefined;
  /** `semantic.activationFailurePolicy` of service.yaml; a VDB may override it. */
  defaultPolicy: ActivationFailurePolicy;
  dialectOf(datasource: string): ExpressionDialect;
  /** The dialect a query over datasets of several datasources is written in (PostgreSQL's text), when one is installed. */
  federationDialectOf(vdb: VirtualDatabase): ExpressionDialect | undefined;
  /** The database a datasource connects to, when its configuration names one: a three-part source may use it. */
  databaseOf?(datasource: string): string | undefined;
  generation: number;
}

/** Where the model's sources look: the default schema (VDB file over manifest) and each datasource's names. */
function sourceDefaults(vdb: VirtualDatabase, manifest: ModuleManifest, context: ActivationDeps): SourceDefaults {
  const datasources = [...new Set([vdb.datasource, ...vdb.schemas.map((schema) => schema.datasource), ...vdb.catalog.relations.map((relation) => relation.datasource)])];
  const aliases = Object.entries(vdb.semantic?.databaseAliases ?? {});
  const databaseNames = new Map(datasources.map((datasource) => [datasource, [
    datasource, vdb.name, ...[context.databaseOf?.(datasource)].filter((name): name is string => name !== undefined),
    ...aliases.filter(([, target]) => target === datasource).map(([alias]) => alias),
  ]]));
  const schema = vdb.semantic?.defaultSchema !== undefined
    ? { name: vdb.semantic.defaultSchema, origin: 'semantic.defaultSchema of the VDB file' }
    : manifest.defaultSchema !== undefined ? { name: manifest.defaultSchema, origin: 'defaultSchema of the manifest' } : undefined;
  return { databaseNames, ...(schema ? { schema } : {}) };
}

export async function activateVdb(vdb: VirtualDatabase, context: ActivationDeps): Promise<VdbActivation> {
  const semantic = vdb.semantic;
  const base = {
    name: vdb.name,
    version: vdb.version,
    generation: context.generation,
    activationFailurePolicy: semantic?.activationFailurePolicy ?? context.defaultPolicy,
    semanticConfigured: semantic !== undefined,
  };
  const reference = semantic && semantic.enabled !== false ? normalizeReference(semantic) : undefined;
  if (!reference) return { ...base, state: 'catalogOnly', diagnostics: [], compilationFailure: null, package: null };

  const diagnostics = new DiagnosticList();
  const vdbFile = vdbFileSite(vdb, context.descriptors);
  let stage: ActivationStage = 'acquire';
  let compiled: CompiledPackage | undefined;
  try {
    const module = await acquireModule({
      reference,
      request: { descriptors: context.descriptors, vdb, dialectOf: context.dialectOf },
      provider: context.provider(reference.providerId),
      vdbFile,
      diagnostics,
    });
    if (module) {
      stage = 'resolve';
      const { model, names } = resolveModel(module, diagnostics);
      const analyzer = new ExpressionAnalyzer(vdb.catalog.functions.filter((fn) => fn.kind === 'aggregate').map((fn) => fn.name));
      stage = 'bind';
      await bindModel(model, { vdb, dialectOf: context.dialectOf, analyzer, diagnostics, sources: sourceDefaults(vdb, module.manifest, context) });
      await resolveMetricReferences(model, names, context.dialectOf, vdb.datasource, analyzer, diagnostics);
      if (!diagnostics.hasErrors('acquire', 'resolve', 'bind')) {
        stage = 'compile';
        const metrics = compileModel(model, context.dialectOf, diagnostics);
        if (!diagnostics.hasErrors()) {
          compiled = buildPackage({ vdb, module, model, metrics, dialectOf: context.dialectOf });
          const federation = context.federationDialectOf(vdb);
          const datasources = new Set(compiled.document.datasets.map((dataset) => dataset.relation.datasource));
          if (federation && datasources.size > 1 && [...datasources].some((datasource) => context.dialectOf(datasource) !== federation)) {
            compiled.federated = await compiledIn(federation, vdb, module, context);
          }
        }
      }
    }
  } catch (error) {
    diagnostics.add('activation.internal_error', siteAt(vdbFile, reference.at), moduleTarget(reference),
      `activation of ${vdb.name} ${vdb.version} failed unexpectedly during ${stage}: ${messageOf(error)}`, stage);
  }
  const state = diagnostics.hasErrors('acquire', 'resolve', 'bind') ? 'invalid' : diagnostics.hasErrors('compile') ? 'compileFailed' : 'active';
  return {
    ...base,
    state,
    diagnostics: diagnostics.sorted(),
    compilationFailure: state === 'compileFailed' ? diagnostics.compilationFailure() : null,
    package: state === 'active' ? (compiled ?? null) : null,
  };
}

/**
 * The model compiled again with every dataset in `dialect`, for queries over several datasources: a field of
 * a MySQL dataset is then quoted and written as PostgreSQL reads it. Its diagnostics are not the VDB's (the
 * model is active already); the first error is the problem a federated query answers.
 */
async function compiledIn(dialect: ExpressionDialect, vdb: VirtualDatabase, module: AcquiredModule, context: ActivationDeps): Promise<NonNullable<CompiledPackage['federated']>> {
  const diagnostics = new DiagnosticList();
  const dialectOf = () => dialect;
  const { model, names } = resolveModel(module, diagnostics);
  const analyzer = new ExpressionAnalyzer(vdb.catalog.functions.filter((fn) => fn.kind === 'aggregate').map((fn) => fn.name));
  await bindModel(model, { vdb, dialectOf, analyzer, diagnostics, sources: sourceDefaults(vdb, module.manifest, context) });
  await resolveMetricReferences(model, names, dialectOf, vdb.datasource, analyzer, diagnostics);
  const metrics = diagnostics.hasErrors() ? [] : compileModel(model, dialectOf, diagnostics);
  const problem = diagnostics.sorted().find((diagnostic) => diagnostic.severity === 'error');
  return problem ? { problem: problem.message } : { document: buildPackage({ vdb, module, model, metrics, dialectOf }).document };
}

/** The VDB file, read again only when a diagnostic points into it. */
function vdbFileSite(vdb: VirtualDatabase, descriptors: string): ModuleFileSite {
  const shown = relative(descriptors, vdb.file);
  let source: YamlSource | undefined;
  return {
    display: shown.startsWith('..') ? vdb.file : shown.split(sep).join('/'),
    rank: 0,
    locate: (path) => {
      source ??= readYamlFile(vdb.file);
      return source.locate(path);
    },
  };
}
