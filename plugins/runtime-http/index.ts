import { defineRuntimeTransport } from '../../core/plugin-api/index.js';
import { httpRuntimeTransport } from './runtime-http-transport.js';

/** Everything the transport needs is in the service's `runtime` settings: the plugin takes no config. */
export default defineRuntimeTransport(() => ({ create: (settings) => httpRuntimeTransport(settings) }));
