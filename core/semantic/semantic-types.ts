import type { SemanticPackage } from '../plugin-api/semantic-package.js';
import type { OssieDocument } from './ossie-document.js';

/** The activation state of one VDB name+version (docs/semantic.md). */
export type SemanticState = 'catalogOnly' | 'invalid' | 'compileFailed' | 'active';

/** What a failed activation does to startup: `isolate` keeps serving, `blockStartup` gates every route. */
export type ActivationFailurePolicy = 'isolate' | 'blockStartup';

export type DiagnosticSeverity = 'error' | 'warning' | 'info';

/** 1-based line and column in the document a diagnostic names. */
export interface SourceLocation {
  line: number;
  column: number;
}

/** One finding of an activation, as the admin API shows it (docs/diagnostics.md). */
export interface Diagnostic {
  /** Stable dotted code, e.g. `bind.column_not_found`; every code is listed in docs/diagnostics.md. */
  code: string;
  /**
   * The OSI Foundation's error code for the same rule (`E_AGGREGATE_IN_FIELD`, `E_NAME_NOT_FOUND`, …),
   * null when the rule is the service's own.
   */
  osiCode: string | null;
  severity: DiagnosticSeverity;
  /**
   * The file at fault: relative to the descriptor bundle (`semantic/retail/sales.osi.yaml`,
   * `vdbs/retail-2.yaml`), the URL of a fetched file, or `catalog:<vdb>@<version>/<path>`.
   */
  document: string;
  location: SourceLocation;
  /**
   * What the diagnostic is about, as `<kind>:<name>`: a catalog object (`relation:sales.orders`,
   * `column:sales.orders.total`, `schema:sales`) or a model element (`dataset:retail.orders`,
   * `field:retail.orders.total`, `metric:retail.revenue`, `relationship:retail.orders_to_customers`,
   * `namespace:retail`, `module:retail-semantic@1.0.0`, `document:sales.osi.yaml`).
   */
  target: string;
  message: string;
  remediation: string;
}

/** Present when compilation failed: the first compile error. */
export interface CompilationFailure {
  code: string;
  message: string;
}

/** A compiled package with the exact bytes it is served as. */
export interface CompiledPackage {
  document: SemanticPackage;
  /** RFC 8785 canonical JSON of `document`: the bytes the admin API serves and the digest covers. */
  canonicalJson: string;
  /** `sha256:<hex>` of `canonicalJson`. */
  digest: string;
  /** The model as an Apache Ossie document, for the admin API's export. */
  ossie: OssieDocument;
  /**
   * The same model compiled in the dialect a federated query is written in (docs/semantic-query.md), where a
   * dataset's datasource has another dialect: its fields' and metrics' SQL quoted and written for it. Not
   * published; undefined where every dataset's dialect is that one already, or where the model does not
   * compile in it (its `problem` then says why).
   */
  federated?: { document: SemanticPackage } | { problem: string };
}

/** The outcome of activating one VDB name+version. Immutable for the life of the process. */
export interface VdbActivation {
  name: string;
  version: string;
  /** 1 for the activation done at startup. */
  generation: number;
  state: SemanticState;
  activationFailurePolicy: ActivationFailurePolicy;
  /** Whether the VDB file has a `semantic` section at all (enabled or not). */
  semanticConfigured: boolean;
  /** Sorted so that the first error is the root cause. */
  diagnostics: Diagnostic[];
  compilationFailure: CompilationFailure | null;
  /** Present only in state `active`. */
  package: CompiledPackage | null;
}

/** `GET /api/v1/admin/semantic/vdbs` entries. */
export interface SemanticVdbSummary {
  name: string;
  version: string;
  generation: number;
  state: SemanticState;
  activationFailurePolicy: ActivationFailurePolicy;
  packageAvailable: boolean;
  packageDigest: string | null;
  diagnosticCount: number;
  errorCount: number;
  warningCount: number;
}

export interface SemanticVdbDetail extends SemanticVdbSummary {
  diagnostics: Diagnostic[];
  compilationFailure: CompilationFailure | null;
}

export type SemanticAvailability = 'initializing' | 'notConfigured' | 'catalogOnly' | 'available' | 'degraded' | 'unavailable';

/** The `semantic` section of `/observe/health`. */
export interface SemanticHealth {
  semanticAvailability: SemanticAvailability;
  vdbCount: number;
  activeCount: number;
  catalogOnlyCount: number;
  invalidCount: number;
  compileFailedCount: number;
  isolatedFailureCount: number;
  startupBlockingFailureCount: number;
  /** 0 while initializing, then the generation of the activation (1 at startup). */
  generation: number;
}
