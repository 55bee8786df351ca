// The /v1/stats/* endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { statsCompare } from './compare';
import { dpePremium } from './dpe-premium';
import { statsMarket } from './market';
import { statsPouvoirAchat } from './pouvoir-achat';
import { statsRendementLocatif } from './rendement-locatif';
import { statsTrends } from './trends';

export const STATS_ENDPOINTS: AnyEndpoint[] = [statsMarket, statsTrends, statsCompare, statsPouvoirAchat, statsRendementLocatif, dpePremium];
