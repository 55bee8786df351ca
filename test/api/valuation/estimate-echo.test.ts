// GET /v1/estimate echoes the property as valued (pieces and classe_dpe included), and when the ±1-room filter leaves
// too few comparables its message names that filter first (the real geo-DVF sample).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
}, 600_000);
afterAll(() => api?.close());

const HOUSE = 'latitude=45.022262&longitude=-0.149933&type_local=Maison&surface=100&code_postal=33230';

describe('GET /v1/estimate input and message', () => {
  it('echoes pieces, classe_dpe and annee_construction (null when not given)', async () => {
    const key = api.key();
    const bare = await api.get(`/v1/estimate?${HOUSE}`, key);
    expect(bare.status).toBe(200);
    expect(bare.body.input).toEqual({ latitude: 45.022262, longitude: -0.149933, surface: 100, type_local: 'Maison', pieces: null, classe_dpe: null, annee_construction: null });
    const full = await api.get(`/v1/estimate?${HOUSE}&pieces=4&classe_dpe=C&annee_construction=1990`, key);
    expect(full.status).toBe(200);
    expect(full.body.input).toMatchObject({ pieces: 4, classe_dpe: 'C', annee_construction: 1990 });
  });
  it('names the ±1-room filter when pieces leaves fewer than 3 comparables', async () => {
    const key = api.key();
    // Without pieces the house has an estimate; with an unusual room count it has none.
    expect((await api.get(`/v1/estimate?${HOUSE}`, key)).body.estimate).not.toBeNull();
    const r = await api.get(`/v1/estimate?${HOUSE}&pieces=30`, key);
    expect(r.status).toBe(200);
    expect(r.body.estimate).toBeNull();
    expect(r.body.message).toMatch(/pieces=30 keeps only sales of 29 to 31 main rooms\. Retry without pieces/);
  });
});
