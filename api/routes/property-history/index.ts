// The /v1/property-history endpoint, mounted by api/app.ts.
import type { AnyEndpoint } from '../../platform';
import { propertyHistory } from './property-history';

export const PROPERTY_HISTORY_ENDPOINTS: AnyEndpoint[] = [propertyHistory];
