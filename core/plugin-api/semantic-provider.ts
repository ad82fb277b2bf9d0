import type { SqlDialect } from './sql-dialect.js';
import type { VirtualDatabase } from './vdb.js';

/** What every provider delivers: a module, i.e. a manifest.yaml and the documents it lists. */
export const MODULE_MEDIA_TYPE = 'application/vnd.vdb.semantic-module+yaml';

/** Media types of documents the service reads. */
export const OSI_YAML_MEDIA_TYPE = 'application/vnd.osi+yaml';
/** The media type of an OSI model document in JSON. */
export const OSI_JSON_MEDIA_TYPE = 'application/vnd.osi+json';

/**
 * How SQL of one datasource is parsed and written: the part of its SqlDialect that models need (its grammar
 * parses expressions, its quoting writes them, its name rules match them to the catalog, its function
 * policy says which functions of an OSI expression the database has, its semantic syntax writes the
 * Foundation's expressions in its own forms).
 */
export type ExpressionDialect = Pick<SqlDialect, 'family' | 'grammar' | 'quoteIdentifier' | 'caseInsensitiveNames' | 'functionPolicy' | 'semanticSyntax'>;

/** Which module a VDB asks a provider for. */
export interface ModuleRequest {
  /** As written in the VDB reference: `semantic/retail` (bundle), `https://...` (http). */
  uri: string;
  /** The media type the reference asks for; `MODULE_MEDIA_TYPE` when it names none. */
  mediaType: string;
  /** Absolute path of the descriptor bundle. */
  descriptors: string;
  /** The VDB being activated, with its introspected catalog. */
  vdb: VirtualDatabase;
  /** The dialect of each of the VDB's datasources, by datasource name. */
  dialectOf(datasource: string): ExpressionDialect;
}

/** One file of a module as the provider delivered it. */
export interface ModuleFile {
  bytes: Uint8Array;
  /** The media type the transport announced (an HTTP Content-Type), when there is one. */
  mediaType?: string;
}

/** An opened module. Each file is read once, during activation at startup. */
export interface ModuleReader {
  /** Names a file of the module in diagnostics, e.g. `semantic/retail/manifest.yaml` or a URL. */
  describe(path: string): string;
  /** The file at `path` (relative to the module, `/`-separated); undefined when the module has none. */
  read(path: string): Promise<ModuleFile | undefined>;
  /** Every file of the module, relative; absent when the provider cannot list (HTTP). */
  list?(): Promise<string[]>;
}

/**
 * What a `semanticProvider` plugin provides. Providers only fetch bytes: the core checks digests,
 * identity, media types and content, so every provider is held to the same rules.
 */
export interface SemanticProvider {
  /** The plugin id, e.g. `http`; selected by `semantic.provider.id` (`bundle` for `semantic.module`). */
  readonly id: string;
  /** Media types this provider can deliver; a reference asking for another one is refused up front. */
  readonly mediaTypes: readonly string[];
  /** Opens the module; throws `ProviderError` when the uri is unusable or the source is unreachable. */
  open(request: ModuleRequest): Promise<ModuleReader>;
}

/** Default cap on one module file: a model of thousands of datasets fits, a runaway download does not. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

/** The failures a provider reports; each becomes the diagnostic of the same code. */
export const PROVIDER_FAILURES = ['provider.uri_invalid', 'provider.unreachable', 'provider.media_type_unsupported', 'module.file_too_large'] as const;
/** One of `PROVIDER_FAILURES`. */
export type ProviderFailure = (typeof PROVIDER_FAILURES)[number];

/** A failure of a semantic provider; its code becomes the diagnostic of the same code. */
export class ProviderError extends Error {
  constructor(
    readonly code: ProviderFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}
