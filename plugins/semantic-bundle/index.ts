import { defineSemanticProvider } from '../../core/plugins/plugin-kinds.js';
import { bundleProvider } from './bundle-provider.js';

export default defineSemanticProvider((id) => bundleProvider(id));
