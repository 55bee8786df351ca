// The income endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { statsPouvoirAchat } from './pouvoir-achat';
import { statsRendementLocatif } from './rendement-locatif';

export const INCOME_ENDPOINTS: AnyEndpoint[] = [statsPouvoirAchat, statsRendementLocatif];
