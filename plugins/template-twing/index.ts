import { defineTemplateEngine } from '../../core/plugins/plugin-kinds.js';
import { createTwingTemplateEngine } from './twing-template-engine.js';

export default defineTemplateEngine((id) => createTwingTemplateEngine(id));
