// The analytics endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { marketActivity } from './activity';
import { statsCompare } from './compare';
import { marketOverview } from './overview';
import { marketScore } from './score';
import { statsTrends } from './trends';

export const ANALYTICS_ENDPOINTS: AnyEndpoint[] = [statsTrends, statsCompare, marketActivity, marketScore, marketOverview];
