/** `rookery compare` as a library (docs/compare.md). */
export { compareServers, formatReport } from './compare.js';
export type { CompareOptions, CompareReport, CompareSide, Difference } from './compare.js';
export { parseAllowList, allowedBy, AllowListError } from './allow.js';
export type { AllowRule } from './allow.js';
export { NORMALIZATIONS, NORMALIZATION_NAMES, normalizeResponse } from './normalize.js';
export type { Normalization } from './normalize.js';
export type { Credentials } from './drive.js';
export type { FillMessage } from './fill.js';
