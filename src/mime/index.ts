/**
 * MIME support: a byte-offset MIME tree of a raw message, and what IMAP
 * builds from it (ENVELOPE, BODY/BODYSTRUCTURE, BODY[section], decoded text
 * for SEARCH, transfer decoding for BINARY). Behaviour follows Dovecot;
 * each module documents the details it copies.
 */
export type { ContentType, Disposition, HeaderField, MimeKind, MimeNode, MimeParam } from './types.js';
export { MAX_DEPTH, getMime, parseMime } from './parse.js';
export { servedSize, servedSource } from './crlf.js';
export { envelope } from './envelope.js';
export { bodyStructure } from './bodystructure.js';
export { bodyBlock, findPart, headerBlock, headerFields, messageSize, section, type SectionSpec } from './section.js';
export { bodyText, charsetOf, decodeHeaderValue, decodeQuotedPrintable, decodeTransfer, headerValues } from './decode.js';
export { decodeCharset } from './charset.js';
export { parseAddressList, type Address } from './address.js';
