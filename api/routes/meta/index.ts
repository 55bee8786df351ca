// The /v1/meta/* endpoints, mounted by api/app.ts.
import type { AnyEndpoint } from '../../platform';
import { metaSources } from './sources';

export const META_ENDPOINTS: AnyEndpoint[] = [metaSources];
