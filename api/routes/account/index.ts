// The /v1/account/* endpoints (what the /dashboard page shows and does), mounted by api/app.ts.
import type { AnyEndpoint } from '../../platform';
import { account, accountRequests, accountUsage } from './account';

export const ACCOUNT_ENDPOINTS: AnyEndpoint[] = [account, accountUsage, accountRequests];
export { mountDashboard } from './dashboard';
export { recordRequests, requestLogOf, endpointLabel } from './request-log';
export { KEY_ENDPOINTS, mountKeyRoutes } from './keys';
