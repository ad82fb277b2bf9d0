import { join } from 'node:path';
import { displayPath } from '../config/yaml-source.js';
import type { StartupProblem } from '../plugin-api/errors.js';
import type {
  CompiledPackage, Diagnostic, SemanticAvailability, SemanticHealth, SemanticVdbDetail, SemanticVdbSummary, VdbActivation,
} from './semantic-types.js';

/** Health while the semantic registry does not exist yet. */
export const INITIALIZING_HEALTH: SemanticHealth = {
  semanticAvailability: 'initializing',
  vdbCount: 0,
  activeCount: 0,
  catalogOnlyCount: 0,
  invalidCount: 0,
  compileFailedCount: 0,
  isolatedFailureCount: 0,
  startupBlockingFailureCount: 0,
  generation: 0,
};

function failed(activation: VdbActivation): boolean {
  return activation.state === 'invalid' || activation.state === 'compileFailed';
}

/**
 * The activation of every VDB name+version, done once at startup and fixed for the life of the process
 * (docs/semantic.md). Consumers read packages from here; the admin API and health report from here.
 */
export class SemanticRegistry {
  private readonly byKey = new Map<string, VdbActivation>();

  constructor(activations: readonly VdbActivation[], readonly generation = 1) {
    const sorted = [...activations].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version, undefined, { numeric: true }));
    for (const activation of sorted) this.byKey.set(key(activation.name, activation.version), activation);
  }

  list(): VdbActivation[] {
    return [...this.byKey.values()];
  }

  find(name: string, version: string): VdbActivation | undefined {
    return this.byKey.get(key(name, version));
  }

  /** The active package of a VDB, for consumers such as the task runtime; undefined unless `active`. */
  packageOf(name: string, version: string): CompiledPackage | undefined {
    return this.find(name, version)?.package ?? undefined;
  }

  /** True when a failed activation's policy is blockStartup: only health and the admin API may answer. */
  get startupBlocked(): boolean {
    return this.list().some((activation) => failed(activation) && activation.activationFailurePolicy === 'blockStartup');
  }

  /**
   * Every error diagnostic as a `file:line` problem, for `vdb-service validate`: severity `error` where the
   * VDB's policy is blockStartup (the service would not serve), `warning` where it is isolate.
   */
  problems(descriptors: string): StartupProblem[] {
    return this.list().flatMap((activation) => activation.diagnostics
      .filter((diagnostic) => diagnostic.severity === 'error')
      .map((diagnostic) => {
        const problem = problemOf(activation, diagnostic, descriptors);
        return { ...problem, message: `semantic model of ${activation.name} ${activation.version}: ${problem.message}` };
      }));
  }

  /** The root cause of a failed activation (diagnostics are sorted root first) as `file:line: code: message`. */
  firstProblem(activation: VdbActivation, descriptors: string): StartupProblem | undefined {
    const cause = activation.diagnostics.find((diagnostic) => diagnostic.severity === 'error');
    return cause && problemOf(activation, cause, descriptors);
  }

  /**
   * The `semantic` section of the health report. Precedence (docs/semantic.md): unavailable > degraded >
   * available > catalogOnly > notConfigured; `initializing` is reported before the registry exists.
   */
  health(): SemanticHealth {
    const activations = this.list();
    const count = (predicate: (activation: VdbActivation) => boolean) => activations.filter(predicate).length;
    const counts = {
      vdbCount: activations.length,
      activeCount: count((activation) => activation.state === 'active'),
      catalogOnlyCount: count((activation) => activation.state === 'catalogOnly'),
      invalidCount: count((activation) => activation.state === 'invalid'),
      compileFailedCount: count((activation) => activation.state === 'compileFailed'),
      isolatedFailureCount: count((activation) => failed(activation) && activation.activationFailurePolicy === 'isolate'),
      startupBlockingFailureCount: count((activation) => failed(activation) && activation.activationFailurePolicy === 'blockStartup'),
    };
    let semanticAvailability: SemanticAvailability = 'notConfigured';
    if (counts.startupBlockingFailureCount > 0) semanticAvailability = 'unavailable';
    else if (counts.isolatedFailureCount > 0) semanticAvailability = 'degraded';
    else if (counts.activeCount > 0) semanticAvailability = 'available';
    else if (activations.some((activation) => activation.semanticConfigured)) semanticAvailability = 'catalogOnly';
    return { semanticAvailability, ...counts, generation: this.generation };
  }
}

function problemOf(activation: VdbActivation, diagnostic: Diagnostic, descriptors: string): StartupProblem {
  return {
    // Bundle paths are shown from the working directory; URLs and catalog: names as they are.
    file: /^[a-z]+:/.test(diagnostic.document) ? diagnostic.document : displayPath(join(descriptors, diagnostic.document)),
    line: diagnostic.location.line,
    message: `${diagnostic.code}: ${diagnostic.message}`,
    severity: activation.activationFailurePolicy === 'blockStartup' ? 'error' : 'warning',
  };
}

export function summaryOf(activation: VdbActivation): SemanticVdbSummary {
  return {
    name: activation.name,
    version: activation.version,
    generation: activation.generation,
    state: activation.state,
    activationFailurePolicy: activation.activationFailurePolicy,
    packageAvailable: activation.package !== null,
    packageDigest: activation.package?.digest ?? null,
    diagnosticCount: activation.diagnostics.length,
    errorCount: activation.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length,
    warningCount: activation.diagnostics.filter((diagnostic) => diagnostic.severity === 'warning').length,
  };
}

export function detailOf(activation: VdbActivation): SemanticVdbDetail {
  return { ...summaryOf(activation), diagnostics: activation.diagnostics, compilationFailure: activation.compilationFailure };
}

function key(name: string, version: string): string {
  return `${name}\u0000${version}`;
}
