// The /v1/bdnb/* building endpoints, mounted by api/app.ts in this order (GET /v1/transactions/:id/bdnb is in transactions/).
import type { AnyEndpoint } from '../../platform';
import { bdnbAgeStats } from './age-stats';
import { bdnbRenovationScore } from './renovation-score';
import { bdnbStats } from './stats';

export const BDNB_ENDPOINTS: AnyEndpoint[] = [bdnbAgeStats, bdnbRenovationScore, bdnbStats];
