// The /v1/dpe/* energy-label endpoints, mounted by api/app.ts in this order (GET /v1/transactions/:id/dpe and
// /v1/stats/dpe-premium read the same marts and live in their URL families, transactions/ and stats/).
import type { AnyEndpoint } from '../../platform';
import { dpeCommuneStats } from './commune-stats';
import { dpeEvolutionPrimeVerte } from './evolution';
import { dpePassoires } from './passoires';
import { dpePrixParClasse } from './prix-par-classe';
import { dpeStats } from './stats';

export const DPE_ENDPOINTS: AnyEndpoint[] = [dpeStats, dpePrixParClasse, dpePassoires, dpeEvolutionPrimeVerte, dpeCommuneStats];
