import { defineSemanticProvider } from '../../core/plugin-api/index.js';
import { httpProvider, type HttpProviderSettings } from './http-provider.js';

/** Settings come from the plugin's configSchema, whose defaults fill what the config leaves out. */
export default defineSemanticProvider((id, config) => httpProvider(id, config as unknown as HttpProviderSettings));
