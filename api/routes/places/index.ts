// The places endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { heatmap } from './heatmap';
import { propertyHistory } from './property-history';

export const PLACES_ENDPOINTS: AnyEndpoint[] = [heatmap, propertyHistory];
