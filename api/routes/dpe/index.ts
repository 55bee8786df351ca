// The energy-label (DPE) endpoints, mounted by api/app.ts in this order. /v1/transactions/:id/dpe and
// /v1/stats/dpe-premium live here too: they read the same DVF × DPE marts.
import type { AnyEndpoint } from '../../platform';
import { dpeCommuneStats } from './commune-stats';
import { dpeEvolutionPrimeVerte } from './evolution';
import { dpePassoires } from './passoires';
import { dpePremium } from './premium';
import { dpePrixParClasse } from './prix-par-classe';
import { dpeStats } from './stats';
import { transactionDpe } from './transaction-dpe';

export const DPE_ENDPOINTS: AnyEndpoint[] = [transactionDpe, dpeStats, dpePremium, dpePrixParClasse, dpePassoires, dpeEvolutionPrimeVerte, dpeCommuneStats];
