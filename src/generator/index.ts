/**
 * The mailbox generator (docs/generator.md): seeded realistic and malformed
 * mail for client tests.
 */
export { checkGenerateOptions, generateMailbox, generateMessages } from './generate.js';
export type { GeneratedMailbox, GeneratedMessage } from './generate.js';
export { MALFORMED_CASES, MALFORMED_CASE_NAMES } from './malformed.js';
export type { MalformedCase } from './malformed.js';
export { BODY_KINDS } from './options.js';
export type { AddressOptions, BodyKind, DateOptions, FlagOptions, GenerateOptions, Profile, SizeRange, ThreadOptions } from './options.js';
export { SCRIPTS, sampleCharsets } from './charsets.js';
export type { Script } from './charsets.js';
