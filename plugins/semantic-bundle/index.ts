import { defineSemanticProvider } from '../../core/plugin-api/index.js';
import { bundleProvider } from './bundle-provider.js';

export default defineSemanticProvider((id) => bundleProvider(id));
