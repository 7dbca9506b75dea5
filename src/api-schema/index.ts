// Every route's description, in the document's order: the one place a new route's schemas go.
// A route module imports its spec from here (or from the file that defines it) and validates with
// its schemas (validate.ts); registerDocsRoutes (src/routes/docs.ts) publishes those of the routes
// registered, and test/unit/api-routes.test.ts fails for a route registered without one.
//
// Adding a route: write its RouteSpec (query and body schemas, responses, the error codes it answers)
// in the module of its concern here, add it to API_ROUTES, and check its input with bodyCheck /
// queryCheck from validate.ts in the route.
import { classifierSpec, trainingAddSpec, trainingListSpec, trainingRemoveSpec } from './classifier.js';
import { inspectSpec } from './inspect.js';
import { apiKeyGenerateSpec, usageSpec } from './keys.js';
import { docsDocumentSpec, docsPageSpec, healthSpec, liveSpec, logsSpec, metricsSpec, readySpec, securityTxtSpec } from './ops.js';
import { audioSpec, challengeSpec, challengeVerifySpec, verifySignatureSpec, verifySpec } from './pow.js';
import type { RouteSpec } from './types.js';

export type { Auth, JsonSchema, ResponseSpec, RouteSpec } from './types.js';

export const API_ROUTES: readonly RouteSpec[] = Object.freeze([
  challengeSpec, verifySpec, audioSpec, inspectSpec,
  challengeVerifySpec, verifySignatureSpec, usageSpec,
  classifierSpec, trainingListSpec, trainingAddSpec, trainingRemoveSpec,
  apiKeyGenerateSpec,
  liveSpec, readySpec, healthSpec, metricsSpec, logsSpec, securityTxtSpec,
  docsPageSpec, docsDocumentSpec,
]);

/** The spec of `method path`, or undefined. */
export function routeSpec(method: string, path: string): RouteSpec | undefined {
  return API_ROUTES.find((r) => r.method === method && r.path === path);
}
