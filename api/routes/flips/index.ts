// The flips endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';

export const FLIPS_ENDPOINTS: AnyEndpoint[] = [];
