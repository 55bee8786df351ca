// Every endpoint against the shared contract (test/helpers/contract.ts), on the real DVF samples.
import { afterAll, beforeAll } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api';
import { describeContract } from '../../helpers/contract';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());
const get = () => api;

describeContract('GET /v1/transactions', get, {
  path: '/v1/transactions?code_postal=33230',
  cost: 5,
  withoutLocation: '/v1/transactions?type_local=Maison',
  invalid: { path: '/v1/transactions?code_postal=33230&limit=201', param: 'limit' },
});
describeContract('GET /v1/transactions/:id', get, {
  path: '/v1/transactions/202103300000001',
  cost: 2,
  invalid: { path: '/v1/transactions/abc', param: 'id' },
  notFound: '/v1/transactions/999999999',
});
describeContract('GET /v1/stats/market', get, {
  path: '/v1/stats/market?code_postal=33230',
  cost: 5,
  withoutLocation: '/v1/stats/market?type_local=Maison',
  invalid: { path: '/v1/stats/market?latitude=45&longitude=-0.1&radius_m=5000', param: 'radius_m' },
});
describeContract('GET /v1/meta/sources', get, { path: '/v1/meta/sources', cost: 0 });
