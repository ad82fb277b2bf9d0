export const PLUGIN_KINDS = [
  'sqlDialect', 'templateEngine', 'templateFunctions', 'semanticProvider', 'runtimeTransport', 'authScheme',
] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** The contents of a plugin's `plugin.json`; its JSON Schema is `plugin.schema.json` at the project root. */
export interface PluginManifest {
  name: string;
  version: string;
  kind: PluginKind;
  id: string;
  /** Module relative to the manifest whose default export registers the plugin. */
  entry: string;
  description: string;
  coreVersion?: string;
  /** JSON Schema of the plugin's own config section. */
  configSchema?: Record<string, unknown>;
}

