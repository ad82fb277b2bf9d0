import { defineTemplateFunctions } from '../../core/plugin-api/index.js';
import { stringFunctions } from './string-functions.js';

export default defineTemplateFunctions(() => stringFunctions);
