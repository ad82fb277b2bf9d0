import type { RouteModule } from '../route-module.js';
import { startupGateRoutes } from '../startup-gate.js';
import { actionRunRoutes } from './action-run-routes.js';
import { adminRoutes } from './admin-routes.js';
import { catalogRoutes } from './catalog-routes.js';
import { docsRoutes } from './docs-routes.js';
import { endpointRoutes } from './endpoint-routes.js';
import { indexRoutes } from './index-routes.js';
import { metricsRoutes } from './metrics-routes.js';
import { openApiRoutes } from './openapi-routes.js';
import { semanticQueryRoutes } from './semantic-query-routes.js';
import { taskRoutes } from './task-routes.js';
import { healthRoutes } from './health-routes.js';

/** The route groups the OpenAPI document describes, in registration order (the startup gate first). */
const described: RouteModule[] = [
  startupGateRoutes, healthRoutes, metricsRoutes, indexRoutes, docsRoutes, adminRoutes, actionRunRoutes, catalogRoutes, semanticQueryRoutes, endpointRoutes, taskRoutes,
];

/** Every route group the service serves: the described ones and the document of them. */
export const routeModules: RouteModule[] = [...described, openApiRoutes(described)];
