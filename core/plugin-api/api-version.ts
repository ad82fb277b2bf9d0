/**
 * The version of the plugin API itself, apart from the service's: what a manifest's `apiVersion` range is
 * checked against. A major bump removes or changes something a plugin may use; a minor one adds; a patch
 * fixes. Each change is listed in docs/plugin-api-changelog.md.
 */
export const PLUGIN_API_VERSION = '1.2.0';
