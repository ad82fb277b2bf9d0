import { join } from 'node:path';
import { pino } from 'pino';
import type { PluginContributions } from '../plugin-api/plugin-context.js';
import type { PluginKind, PluginManifest } from '../plugin-api/plugin-manifest.js';
import { ExtensionRegistries } from '../plugins/extension-registry.js';
import { loadPlugins } from '../plugins/plugin-loader.js';

/**
 * One check of a conformance suite. Suites return plain cases so that any test runner runs them
 * (`for (const c of cases) test(c.name, c.run)` with uvu, `node:test` or another); `run` rejects on failure.
 */
export interface ConformanceCase {
  /** What the case checks, e.g. `refused credentials are CredentialErrors with their reason`. */
  readonly name: string;
  /** Runs the check; rejects with an assertion error naming what differs. */
  readonly run: () => Promise<void>;
}

/** A case that failed: its name and why. */
export interface ConformanceFailure {
  /** The case's name. */
  readonly name: string;
  /** The error it rejected with. */
  readonly error: unknown;
}

/** Runs the cases one after the other and answers the failures; empty when the plugin conforms. */
export async function runConformance(cases: readonly ConformanceCase[]): Promise<ConformanceFailure[]> {
  const failures: ConformanceFailure[] = [];
  for (const check of cases) {
    try {
      await check.run();
    } catch (error) {
      failures.push({ name: check.name, error });
    }
  }
  return failures;
}

/** A plugin as the service loaded it: its manifest and what its registration contributed. */
export interface LoadedContribution<K extends PluginKind> {
  /** Its validated plugin.json. */
  readonly manifest: PluginManifest;
  /** The value its registration passed to `contribute`. */
  readonly contribution: PluginContributions[K];
}

const silent = pino({ level: 'silent' });

/**
 * Loads one plugin folder (its plugin.json beside its built entry) through the service's own loader, with
 * every check startup makes (manifest, apiVersion, entry, config), and answers its contribution of `kind`.
 * Rejects with the loader's `StartupError` when startup would refuse it.
 */
export async function loadContribution<K extends PluginKind>(kind: K, folder: string, config: Record<string, unknown> = {}): Promise<LoadedContribution<K>> {
  const extensions = new ExtensionRegistries();
  const [loaded] = await loadPlugins(extensions, silent, [{ manifestPath: join(folder, 'plugin.json'), config, builtIn: false }]);
  if (!loaded) throw new Error(`${folder}: nothing loaded`);
  const { manifest } = loaded;
  if (manifest.kind !== kind) throw new Error(`${folder}: plugin ${manifest.name} is a ${manifest.kind}, not a ${kind}`);
  const contribution = extensions.contributionOf(kind, manifest.id);
  if (contribution === undefined) throw new Error(`plugin ${manifest.name}: its registration contributed no ${kind}`);
  return { manifest, contribution };
}
