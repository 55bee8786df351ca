// The valuation endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { comparables } from './comparables';
import { estimate } from './estimate';

export const VALUATION_ENDPOINTS: AnyEndpoint[] = [comparables, estimate];
