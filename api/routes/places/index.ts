// The places endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';

export const PLACES_ENDPOINTS: AnyEndpoint[] = [];
