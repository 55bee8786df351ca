// The flips endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { flips } from './flips';

export const FLIPS_ENDPOINTS: AnyEndpoint[] = [flips];
