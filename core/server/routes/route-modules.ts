import type { RouteModule } from '../route-module.js';
import { catalogRoutes } from './catalog-routes.js';
import { healthRoutes } from './health-routes.js';

/** Every route group the service serves, in registration order. */
export const routeModules: RouteModule[] = [healthRoutes, catalogRoutes];
