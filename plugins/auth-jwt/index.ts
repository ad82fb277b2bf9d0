import { defineAuthScheme } from '../../core/plugins/plugin-kinds.js';
import { jwtSchemeFactory } from './jwt-scheme.js';

export default defineAuthScheme(jwtSchemeFactory);
