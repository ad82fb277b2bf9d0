import { forEachBackend } from '../../support/backends.js';
import { runEndpointSuite } from './endpoint-suite.js';

forEachBackend((backend) => runEndpointSuite({
  ...backend,
  open: () => backend.open(),
  // PGlite decodes result text with a TextDecoder that drops a leading U+FEFF (the stored value keeps it)
  readsWithoutLeadingBom: backend.name === 'pglite',
}));
