import { defineSemanticProvider } from '../../core/plugin-api/index.js';
import { catalogProvider } from './catalog-provider.js';

export default defineSemanticProvider((id) => catalogProvider(id));
