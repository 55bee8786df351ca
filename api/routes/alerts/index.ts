// The /v1/alerts endpoints, mounted by api/app.ts in this order.
import type { AnyEndpoint } from '../../platform';
import { alertsCreate, alertsDeliveries, alertsDelete, alertsList, alertsUpdate } from './alerts';

export const ALERTS_ENDPOINTS: AnyEndpoint[] = [alertsCreate, alertsList, alertsUpdate, alertsDelete, alertsDeliveries];
