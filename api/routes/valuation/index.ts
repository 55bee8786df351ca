// The valuation endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';

export const VALUATION_ENDPOINTS: AnyEndpoint[] = [];
