import { defineRuntimeTransport } from '../../core/plugin-api/index.js';
import { inProcessTransport } from './in-process-transport.js';
import { ReferenceRuntime } from './reference-runtime.js';

/** In process there is no URL and no token to use: the runtime's settings do not apply, and the plugin takes no config. */
export default defineRuntimeTransport(() => ({ create: () => inProcessTransport(new ReferenceRuntime()) }));
