// The income endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';

export const INCOME_ENDPOINTS: AnyEndpoint[] = [];
