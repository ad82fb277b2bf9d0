import assert from 'node:assert/strict';
import { PROVIDER_FAILURES, ProviderError, type ModuleReader, type ModuleRequest } from '../plugin-api/semantic-provider.js';
import { loadContribution, type ConformanceCase, type LoadedContribution } from './conformance-case.js';

/** What the semantic provider suite runs against. */
export interface SemanticProviderConformanceTarget {
  /** The folder holding the plugin's plugin.json, beside its built entry. */
  plugin: string;
  /** The `config` of its `plugins` entry, checked against its configSchema. */
  config?: Record<string, unknown>;
  /** A request for a module the provider delivers: one holding `manifest.yaml`. */
  request: ModuleRequest;
  /** A request the provider must refuse (a uri it cannot use, a source that does not answer). */
  refused: ModuleRequest;
}

/** A path no module holds. */
const ABSENT = 'conformance-absent/no-such-file.yaml';

async function providerError(attempt: Promise<unknown>): Promise<ProviderError> {
  try {
    await attempt;
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    assert.ok((PROVIDER_FAILURES as readonly string[]).includes(error.code), `code "${error.code}" is not a ProviderFailure`);
    return error;
  }
  return assert.fail('expected a ProviderError, but the provider delivered');
}

/**
 * The conformance suite of `semanticProvider` plugins: the plugin loads as the service loads it, opens a
 * module and reads its files as bytes, answers undefined for a file the module lacks, names files in
 * diagnostics, lists (when it can) only relative paths it can read, reads the same bytes again, and refuses
 * what it cannot deliver with a `ProviderError` of a catalogued code.
 */
export function semanticProviderConformance(target: SemanticProviderConformanceTarget): ConformanceCase[] {
  let loading: Promise<LoadedContribution<'semanticProvider'>> | undefined;
  const loaded = () => (loading ??= loadContribution('semanticProvider', target.plugin, target.config));
  let opening: Promise<ModuleReader> | undefined;
  const reader = () => (opening ??= loaded().then(({ contribution }) => contribution.open(target.request)));

  return [
    { name: 'loads through the service loader as a semanticProvider under its manifest id', run: async () => {
      const { manifest, contribution } = await loaded();
      assert.equal(contribution.id, manifest.id);
      assert.ok(contribution.mediaTypes.length > 0 && contribution.mediaTypes.every((type) => typeof type === 'string' && type.includes('/')));
    } },
    { name: 'opens the module and reads its manifest.yaml as bytes', run: async () => {
      const file = await (await reader()).read('manifest.yaml');
      assert.ok(file, 'manifest.yaml is delivered');
      assert.ok(file.bytes instanceof Uint8Array && file.bytes.byteLength > 0);
      if (file.mediaType !== undefined) assert.equal(typeof file.mediaType, 'string');
    } },
    { name: 'a file the module does not hold reads as undefined', run: async () => {
      assert.equal(await (await reader()).read(ABSENT), undefined);
    } },
    { name: 'describe names a file of the module for diagnostics', run: async () => {
      const name = (await reader()).describe('manifest.yaml');
      assert.equal(typeof name, 'string');
      assert.ok(name.includes('manifest.yaml'), name);
    } },
    { name: 'list, when offered, answers relative paths that read, manifest.yaml among them', run: async () => {
      const opened = await reader();
      if (!opened.list) return;
      const paths = await opened.list();
      assert.ok(paths.includes('manifest.yaml'), `listed: ${paths.join(', ')}`);
      for (const path of paths) {
        assert.ok(!path.startsWith('/') && !path.split('/').includes('..') && !path.includes('\\'), `listed path "${path}"`);
        assert.ok(await opened.read(path), `${path} is listed but does not read`);
      }
    } },
    { name: 'a file reads as the same bytes again', run: async () => {
      const opened = await reader();
      const [first, second] = [await opened.read('manifest.yaml'), await opened.read('manifest.yaml')];
      assert.deepEqual(Buffer.from(second?.bytes ?? []), Buffer.from(first?.bytes ?? []));
    } },
    { name: 'what it cannot deliver is refused with a ProviderError of a catalogued code', run: async () => {
      const { contribution } = await loaded();
      await providerError(contribution.open(target.refused).then((opened) => opened.read('manifest.yaml')));
    } },
  ];
}
