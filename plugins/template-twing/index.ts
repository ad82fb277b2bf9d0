import { defineTemplateEngine } from '../../core/plugin-api/index.js';
import { createTwingTemplateEngine } from './twing-template-engine.js';

export default defineTemplateEngine((id) => createTwingTemplateEngine(id));
