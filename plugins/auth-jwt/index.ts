import { defineAuthScheme } from '../../core/plugin-api/index.js';
import { jwtSchemeFactory } from './jwt-scheme.js';

export default defineAuthScheme(jwtSchemeFactory);
