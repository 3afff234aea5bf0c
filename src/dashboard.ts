/**
 * leaseq's dashboard as a request handler, to mount in an existing HTTP server
 * (`leaseq dashboard` serves the same thing on its own).
 *
 * ```ts
 * import { createServer } from "node:http"
 * import { dashboardHandler } from "leaseq/dashboard"
 * createServer(dashboardHandler({ connection: process.env.REDIS_URL })).listen(7300, "127.0.0.1")
 * ```
 * @module
 */
export { ACTION_MAX_JOBS } from "./dashboard/Actions.ts"
export { type DashboardHandler, type DashboardOptions, dashboardHandler } from "./dashboard/DashboardHandler.ts"
export { DASHBOARD_LIMITS, TEXT_LIMIT } from "./dashboard/Read.ts"
