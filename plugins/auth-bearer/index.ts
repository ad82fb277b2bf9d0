import { defineAuthScheme } from '../../core/plugin-api/index.js';
import { bearerSchemeFactory } from './bearer-scheme.js';

export default defineAuthScheme(bearerSchemeFactory);
