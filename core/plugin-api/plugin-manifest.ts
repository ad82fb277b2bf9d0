/** The kinds of plugin, one per extension point: the `kind` of a manifest. */
export const PLUGIN_KINDS = [
  'sqlDialect', 'templateEngine', 'templateFunctions', 'semanticProvider', 'runtimeTransport', 'authScheme',
] as const;
/** One of `PLUGIN_KINDS`. */
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** The contents of a plugin's `plugin.json`; its JSON Schema is `plugin.schema.json` at the project root. */
export interface PluginManifest {
  /** Package-style name, shown in every message about the plugin. */
  name: string;
  /** Semver of the plugin itself. */
  version: string;
  /** The extension point it contributes to. */
  kind: PluginKind;
  /** What service.yaml selects it by; unique per kind. */
  id: string;
  /** Module relative to the manifest whose default export registers the plugin. */
  entry: string;
  /** One line on what the plugin does. */
  description: string;
  /**
   * Semver range of plugin API versions the plugin is written for, e.g. `^1.0.0`, checked against
   * `PLUGIN_API_VERSION`; absent is read as `^1.0.0` (manifests written before the API had a version).
   */
  apiVersion?: string;
  /** Semver range of vdb-service versions the plugin works with, when it needs more than the API. */
  coreVersion?: string;
  /** JSON Schema of the plugin's own config section. */
  configSchema?: Record<string, unknown>;
}
