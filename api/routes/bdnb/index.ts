// The BDNB (buildings) endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { bdnbAgeStats } from './age-stats';
import { transactionBdnb } from './building';
import { bdnbRenovationScore } from './renovation-score';
import { bdnbStats } from './stats';

export const BDNB_ENDPOINTS: AnyEndpoint[] = [transactionBdnb, bdnbAgeStats, bdnbRenovationScore, bdnbStats];
