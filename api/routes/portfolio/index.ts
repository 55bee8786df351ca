// The /v1/portfolio endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { portfolioCreate, portfolioDelete, portfolioGet, portfolioList, portfolioUpdate } from './portfolio';

export const PORTFOLIO_ENDPOINTS: AnyEndpoint[] = [portfolioCreate, portfolioList, portfolioGet, portfolioUpdate, portfolioDelete];
