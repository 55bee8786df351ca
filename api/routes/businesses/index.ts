// The businesses endpoints (SIRENE), mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { getBusiness } from './lookup';
import { searchBusinesses } from './search';

export const BUSINESSES_ENDPOINTS: AnyEndpoint[] = [searchBusinesses, getBusiness];
