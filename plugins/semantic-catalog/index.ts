import { defineSemanticProvider } from '../../core/plugins/plugin-kinds.js';
import { catalogProvider } from './catalog-provider.js';

export default defineSemanticProvider((id) => catalogProvider(id));
