import { dotted } from '../config/schema-validation.js';
import { messageOf } from '../plugin-api/errors.js';
import type { SemanticReference } from '../plugin-api/vdb.js';
import { contentDigest, sha256Hex } from './digests.js';
import type { DiagnosticList, DiagnosticSite, SiteRef } from './diagnostic-list.js';
import { parseModuleText, type DocumentPath, type DocumentSyntax, type LocatedDocument } from './located-document.js';
import { fillVariantDialects } from './expression-dialects.js';
import { isDeferredKey, manifestSchema, osiDocumentSchema, shapeProblems, type ModuleManifest, type OsiDocument } from './module-schemas.js';
import {
  MODULE_MEDIA_TYPE, OSI_JSON_MEDIA_TYPE, OSI_YAML_MEDIA_TYPE, ProviderError,
  type ModuleFile, type ModuleReader, type ModuleRequest, type SemanticProvider,
} from '../plugin-api/semantic-provider.js';
import type { SourceLocation } from './semantic-types.js';

const MANIFEST = 'manifest.yaml';

const DOCUMENT_SYNTAX: Readonly<Record<string, DocumentSyntax>> = {
  [OSI_YAML_MEDIA_TYPE]: 'yaml',
  [OSI_JSON_MEDIA_TYPE]: 'json',
};

/** Media types a transport may announce for a module file; anything else (HTML, images) is refused. */
const TRANSPORT_MEDIA_TYPES: ReadonlySet<string> = new Set([
  'application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml', 'application/json', 'text/plain',
  'application/octet-stream', MODULE_MEDIA_TYPE, OSI_YAML_MEDIA_TYPE, OSI_JSON_MEDIA_TYPE,
]);

/** A file of the activation that diagnostics can point into. */
export interface ModuleFileSite {
  /** As diagnostics name it. */
  display: string;
  rank: number;
  locate(path: DocumentPath): SourceLocation;
}

export function siteAt(file: ModuleFileSite, path: DocumentPath): DiagnosticSite {
  return { document: file.display, rank: file.rank, location: file.locate(path) };
}

export interface AcquiredDocument extends ModuleFileSite {
  /** Relative to the module, as the manifest lists it. */
  path: string;
  mediaType: string;
  value: OsiDocument;
  contentDigest: string;
}

export interface AcquiredModule {
  manifest: ModuleManifest;
  documents: AcquiredDocument[];
}

/** The VDB's semantic reference, in the one form both `module` and `provider` references take. */
export interface NormalizedReference {
  providerId: string;
  uri: string;
  mediaType: string;
  sha256: string;
  name?: string;
  version?: string;
  /** Where the reference sits in the VDB file: `['semantic', 'module']` or `['semantic', 'provider']`. */
  at: DocumentPath;
}

export function normalizeReference(reference: SemanticReference): NormalizedReference | undefined {
  if (reference.module) {
    const { uri, name, version, sha256 } = reference.module;
    return { providerId: 'bundle', uri, mediaType: MODULE_MEDIA_TYPE, sha256, name, version, at: ['semantic', 'module'] };
  }
  if (reference.provider) {
    const { id, uri, mediaType, version, sha256 } = reference.provider;
    return { providerId: id, uri, mediaType: mediaType ?? MODULE_MEDIA_TYPE, sha256, ...(version === undefined ? {} : { version }), at: ['semantic', 'provider'] };
  }
  return undefined;
}

export function moduleTarget(reference: NormalizedReference): string {
  return reference.name ? `module:${reference.name}@${reference.version ?? ''}` : `module:${reference.uri}`;
}

interface AcquisitionInput {
  reference: NormalizedReference;
  request: Omit<ModuleRequest, 'uri' | 'mediaType'>;
  provider: SemanticProvider | undefined;
  /** The VDB file, where reference problems point. */
  vdbFile: ModuleFileSite;
  diagnostics: DiagnosticList;
}

/**
 * Acquisition: the provider exists and delivers the media type; the manifest's digest equals the
 * reference's; its identity matches; every listed document is there with its digest, parses, and is an OSI
 * document; unlisted files are warned about. Returns nothing when any of that failed.
 */
export async function acquireModule(input: AcquisitionInput): Promise<AcquiredModule | undefined> {
  const { reference, provider, vdbFile, diagnostics } = input;
  const target = moduleTarget(reference);
  // Lazy: the VDB file is read again only when a diagnostic points into it.
  const atReference = (key: string) => () => siteAt(vdbFile, [...reference.at, key]);
  if (!provider) {
    diagnostics.add('provider.unknown', atReference(reference.at[1] === 'module' ? 'uri' : 'id'), target,
      `no semantic provider "${reference.providerId}" is installed`);
    return undefined;
  }
  if (!provider.mediaTypes.includes(reference.mediaType)) {
    diagnostics.add('provider.media_type_unsupported', atReference('mediaType'), target,
      `provider "${provider.id}" delivers ${provider.mediaTypes.join(', ')}, not ${reference.mediaType}`);
    return undefined;
  }
  const reader = await reported(diagnostics, atReference('uri'), target,
    () => provider.open({ ...input.request, uri: reference.uri, mediaType: reference.mediaType }));
  if (!reader) return undefined;

  const manifestBytes = await readFile(reader, MANIFEST, atReference('uri'), target, diagnostics);
  if (manifestBytes === undefined) return undefined;
  if (manifestBytes === null) {
    diagnostics.add('module.manifest_missing', atReference('uri'), target, `${reader.describe(MANIFEST)} does not exist`);
    return undefined;
  }
  const digest = sha256Hex(manifestBytes.bytes);
  if (digest !== reference.sha256) {
    diagnostics.add('module.digest_mismatch', atReference('sha256'), target,
      `${reader.describe(MANIFEST)} has sha256 ${digest}, the reference expects ${reference.sha256}`);
    return undefined;
  }
  const manifest = parseManifest(reader, manifestBytes, target, diagnostics);
  if (!manifest) return undefined;
  checkIdentity(reference, manifest.value, atReference, target, diagnostics);

  const documents = await Promise.all(manifest.value.documents.map((entry, index) =>
    acquireDocument(reader, manifest.site, entry, index, diagnostics)));
  await warnUnlisted(reader, manifest.value, diagnostics);
  if (diagnostics.hasErrors('acquire')) return undefined;
  return {
    manifest: manifest.value,
    documents: documents.filter((document): document is AcquiredDocument => document !== undefined),
  };
}

/** Runs a provider call; a ProviderError becomes its diagnostic, anything else is an internal error. */
async function reported<T>(diagnostics: DiagnosticList, site: SiteRef, target: string, call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    diagnostics.add(error.code, site, target, error.message);
    return undefined;
  }
}

/** The file, `null` when the module has none, `undefined` when reading failed (already diagnosed). */
async function readFile(reader: ModuleReader, path: string, site: SiteRef, target: string, diagnostics: DiagnosticList): Promise<ModuleFile | null | undefined> {
  const file = await reported(diagnostics, site, target, async () => (await reader.read(path)) ?? null);
  if (!file) return file;
  const announced = file.mediaType?.split(';')[0]?.trim().toLowerCase();
  if (announced && !TRANSPORT_MEDIA_TYPES.has(announced) && !/\+(yaml|json)$/.test(announced)) {
    diagnostics.add('provider.media_type_unsupported', site, target, `${reader.describe(path)} was served as ${announced}, not as YAML, JSON or text`);
    return undefined;
  }
  return file;
}

function parseManifest(reader: ModuleReader, file: ModuleFile, target: string, diagnostics: DiagnosticList):
  { value: ModuleManifest; site: ModuleFileSite } | undefined {
  const display = reader.describe(MANIFEST);
  const parsed = parseModuleText(file.bytes, 'yaml', display);
  if (!parsed.ok) {
    diagnostics.add('module.manifest_invalid', { document: display, rank: 1, location: parsed.location }, target, parsed.message);
    return undefined;
  }
  const site: ModuleFileSite = { display, rank: 1, locate: parsed.document.locate };
  const problems = shapeProblems(manifestSchema, parsed.document.value);
  for (const problem of problems) diagnostics.add('module.manifest_invalid', siteAt(site, problem.path), target, problem.message);
  if (problems.length > 0) return undefined;
  const value = parsed.document.value as ModuleManifest;
  const seen = new Set<string>();
  value.documents.forEach((entry, index) => {
    if (seen.has(entry.path)) diagnostics.add('module.manifest_invalid', siteAt(site, ['documents', index, 'path']), target, `documents: "${entry.path}" is listed twice`);
    seen.add(entry.path);
  });
  if (seen.size < value.documents.length) return undefined;
  return { value, site };
}

function checkIdentity(reference: NormalizedReference, manifest: ModuleManifest, atReference: (key: string) => SiteRef, target: string, diagnostics: DiagnosticList): void {
  if (reference.name !== undefined && reference.name !== manifest.name) {
    diagnostics.add('module.identity_mismatch', atReference('name'), target,
      `the reference expects module name "${reference.name}", the manifest is "${manifest.name}"`);
  }
  if (reference.version !== undefined && reference.version !== manifest.version) {
    diagnostics.add('module.identity_mismatch', atReference('version'), target,
      `the reference expects module version "${reference.version}", the manifest is "${manifest.version}"`);
  }
}

async function acquireDocument(
  reader: ModuleReader,
  manifestSite: ModuleFileSite,
  entry: ModuleManifest['documents'][number],
  index: number,
  diagnostics: DiagnosticList,
): Promise<AcquiredDocument | undefined> {
  const target = `document:${entry.path}`;
  const at = (key: string) => () => siteAt(manifestSite, ['documents', index, key]);
  const syntax = DOCUMENT_SYNTAX[entry.mediaType];
  if (!syntax) {
    diagnostics.add('module.media_type_unsupported', at('mediaType'), target,
      `${entry.path} is listed as ${entry.mediaType}; documents are ${OSI_YAML_MEDIA_TYPE} or ${OSI_JSON_MEDIA_TYPE}`);
    return undefined;
  }
  const file = await readFile(reader, entry.path, at('path'), target, diagnostics);
  if (file === undefined) return undefined;
  if (file === null) {
    diagnostics.add('module.document_missing', at('path'), target, `${reader.describe(entry.path)} does not exist`);
    return undefined;
  }
  const digest = sha256Hex(file.bytes);
  if (digest !== entry.sha256) {
    diagnostics.add('module.document_digest_mismatch', at('sha256'), target,
      `${reader.describe(entry.path)} has sha256 ${digest}, the manifest lists ${entry.sha256}`);
    return undefined;
  }
  const display = reader.describe(entry.path);
  const rank = 2 + index;
  const parsed = parseModuleText(file.bytes, syntax, display);
  if (!parsed.ok) {
    diagnostics.add('document.yaml_invalid', { document: display, rank, location: parsed.location }, target, parsed.message);
    return undefined;
  }
  return osiDocument(parsed.document, { path: entry.path, display, rank, mediaType: entry.mediaType }, diagnostics);
}

/** Document versions of OSI 1.0 and Apache Ossie the service reads; another is read as the latest, with a warning. */
const KNOWN_DOCUMENT_VERSIONS: ReadonlySet<string> = new Set(['1.0', '0.1.0', '0.1.1', '0.2.0.dev0']);

function osiDocument(
  document: LocatedDocument,
  file: { path: string; display: string; rank: number; mediaType: string },
  diagnostics: DiagnosticList,
): AcquiredDocument | undefined {
  const site: ModuleFileSite = { display: file.display, rank: file.rank, locate: document.locate };
  const problems = shapeProblems(osiDocumentSchema, document.value);
  for (const problem of problems) {
    if (isDeferredKey(problem)) {
      diagnostics.add('document.deferred_key', siteAt(site, problem.path), `document:${file.path}`,
        `${dotted(problem.path.slice(0, -1)) || '(document)'}: "${problem.unknownKey}" is a key the OSI Foundation defers to a later proposal`);
    } else {
      diagnostics.add('document.schema_invalid', siteAt(site, problem.path), `document:${file.path}`, problem.message);
    }
  }
  if (problems.length > 0) return undefined;
  const version = (document.value as OsiDocument).version;
  if (version !== undefined && !KNOWN_DOCUMENT_VERSIONS.has(version)) {
    diagnostics.add('document.version_unknown', siteAt(site, ['version']), `document:${file.path}`,
      `version ${version} is not a document version the service knows (${[...KNOWN_DOCUMENT_VERSIONS].join(', ')}); it is read as the latest`);
  }
  fillVariantDialects(document.value as OsiDocument);
  let digest: string;
  try {
    digest = contentDigest(document.value);
  } catch (error) {
    // YAML can spell numbers JSON cannot (.nan, .inf); the package is JSON.
    diagnostics.add('document.schema_invalid', siteAt(site, []), `document:${file.path}`, `the document cannot be written as JSON: ${messageOf(error)}`);
    return undefined;
  }
  return { ...site, path: file.path, mediaType: file.mediaType, value: document.value as OsiDocument, contentDigest: digest };
}

/** Files in the module that the manifest does not list are ignored, with a warning; dotfiles are not. */
async function warnUnlisted(reader: ModuleReader, manifest: ModuleManifest, diagnostics: DiagnosticList): Promise<void> {
  if (!reader.list) return;
  const listed = new Set([MANIFEST, ...manifest.documents.map((entry) => entry.path)]);
  const files = await reader.list();
  for (const path of files.filter((file) => !listed.has(file) && !file.split('/').some((part) => part.startsWith('.'))).sort()) {
    diagnostics.add('module.document_unlisted', { document: reader.describe(path), rank: 2 + manifest.documents.length, location: { line: 1, column: 1 } },
      `document:${path}`, `${path} is in the module but not listed in manifest.yaml; it is ignored`);
  }
}
