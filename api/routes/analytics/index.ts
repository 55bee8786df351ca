// The analytics endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';

export const ANALYTICS_ENDPOINTS: AnyEndpoint[] = [];
