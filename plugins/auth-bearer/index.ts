import { defineAuthScheme } from '../../core/plugins/plugin-kinds.js';
import { bearerSchemeFactory } from './bearer-scheme.js';

export default defineAuthScheme(bearerSchemeFactory);
