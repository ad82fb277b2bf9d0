import { DIAGNOSTICS, STAGE_ORDER, type ActivationStage, type DiagnosticCode, type DiagnosticDefinition } from './diagnostic-codes.js';
import type { CompilationFailure, Diagnostic, DiagnosticSeverity, SourceLocation } from './semantic-types.js';

/** Where a diagnostic points: a file, its rank among the activation's files, and a position in it. */
export interface DiagnosticSite {
  document: string;
  /** The VDB file is 0, the manifest 1, documents follow in manifest order: sorting follows reading order. */
  rank: number;
  location: SourceLocation;
}

/** A site, or how to find it: positions are looked up only for diagnostics that are reported. */
export type SiteRef = DiagnosticSite | (() => DiagnosticSite);

interface Entry extends Diagnostic {
  stage: ActivationStage;
  rank: number;
}

const SEVERITY_ORDER: Readonly<Record<DiagnosticSeverity, number>> = { error: 0, warning: 1, info: 2 };

/** Collects the diagnostics of one activation; severity and remediation come from the catalog. */
export class DiagnosticList {
  private readonly entries: Entry[] = [];

  /**
   * `site` may be a function: finding a position costs a walk of the document (and, for JSON, a YAML read),
   * so code that checks many elements passes where to look and pays only when something is wrong.
   * `stage` is needed only for codes whose stage depends on where they happened (internal errors).
   */
  add(code: DiagnosticCode, where: SiteRef, target: string, message: string, stage?: ActivationStage): void {
    const definition: DiagnosticDefinition = DIAGNOSTICS[code];
    const site = typeof where === 'function' ? where() : where;
    this.entries.push({
      code,
      osiCode: definition.osiCode ?? null,
      severity: definition.severity,
      document: site.document,
      location: site.location,
      target,
      message,
      remediation: definition.remediation,
      stage: stage ?? definition.stage ?? 'compile',
      rank: site.rank,
    });
  }

  /** Whether an error was reported in one of these stages. */
  hasErrors(...stages: ActivationStage[]): boolean {
    return this.entries.some((entry) => entry.severity === 'error' && (stages.length === 0 || stages.includes(entry.stage)));
  }

  /** The first compile-stage error, when no earlier stage failed: what the detail shows as compilationFailure. */
  compilationFailure(): CompilationFailure | null {
    const first = this.sortedEntries().find((entry) => entry.severity === 'error');
    return first?.stage === 'compile' ? { code: first.code, message: first.message } : null;
  }

  /**
   * Sorted so that the first error is the root cause: by stage (an acquisition failure explains a missing
   * dataset), then errors before warnings, then reading order (file, line, column).
   */
  sorted(): Diagnostic[] {
    return this.sortedEntries().map(({ stage: _stage, rank: _rank, ...diagnostic }) => diagnostic);
  }

  private sortedEntries(): Entry[] {
    return [...this.entries].sort((a, b) =>
      STAGE_ORDER[a.stage] - STAGE_ORDER[b.stage]
      || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]
      || a.rank - b.rank
      || a.location.line - b.location.line
      || a.location.column - b.location.column
      || a.code.localeCompare(b.code)
      || a.target.localeCompare(b.target));
  }
}
