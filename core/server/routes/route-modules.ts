import type { RouteModule } from '../route-module.js';
import { startupGateRoutes } from '../startup-gate.js';
import { adminRoutes } from './admin-routes.js';
import { catalogRoutes } from './catalog-routes.js';
import { endpointRoutes } from './endpoint-routes.js';
import { taskRoutes } from './task-routes.js';
import { healthRoutes } from './health-routes.js';

/** Every route group the service serves, in registration order (the startup gate first). */
export const routeModules: RouteModule[] = [startupGateRoutes, healthRoutes, adminRoutes, catalogRoutes, endpointRoutes, taskRoutes];
