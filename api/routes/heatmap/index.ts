// The /v1/heatmap endpoint, mounted by api/app.ts.
import type { AnyEndpoint } from '../../platform';
import { heatmap } from './heatmap';

export const HEATMAP_ENDPOINTS: AnyEndpoint[] = [heatmap];
