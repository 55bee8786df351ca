// The /v1/transactions endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { getTransaction, searchTransactions } from './transactions';

export const TRANSACTIONS_ENDPOINTS: AnyEndpoint[] = [searchTransactions, getTransaction];
