// The /v1/transactions endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { transactionBdnb } from './bdnb';
import { transactionDpe } from './dpe';
import { getTransaction, searchTransactions } from './transactions';

export const TRANSACTIONS_ENDPOINTS: AnyEndpoint[] = [searchTransactions, getTransaction, transactionDpe, transactionBdnb];
