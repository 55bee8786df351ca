// The /v1/market-activity, /v1/market-score and /v1/market-overview endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { marketActivity } from './activity';
import { marketOverview } from './overview';
import { marketScore } from './score';

export const MARKET_ENDPOINTS: AnyEndpoint[] = [marketActivity, marketScore, marketOverview];
