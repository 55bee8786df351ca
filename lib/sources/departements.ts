// The 101 départements (Corsica as 2A and 2B, the five overseas ones): the default selection of a national source
// split by département (DPE, BDNB). A source that covers fewer declares its own list (DVF).
export const ALL_DEPARTEMENTS = [
  ...Array.from({ length: 95 }, (_, i) => String(i + 1).padStart(2, '0')).filter((d) => d !== '20'),
  '2A', '2B', '971', '972', '973', '974', '976',
];
