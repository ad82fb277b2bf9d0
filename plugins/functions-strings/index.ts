import { defineTemplateFunctions } from '../../core/plugins/plugin-kinds.js';
import { stringFunctions } from './string-functions.js';

export default defineTemplateFunctions(() => stringFunctions);
