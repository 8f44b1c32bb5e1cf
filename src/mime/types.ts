/**
 * Types of the byte-offset MIME tree built by `parseMime`.
 *
 * Every offset is an index into the raw message Buffer the tree was parsed
 * from; Buffers held by the tree are views (`subarray`) of that same Buffer,
 * never copies, so they must not be written to.
 */

/** One header field, folded continuation lines included. */
export interface HeaderField {
  /** Field name as written (bytes before the colon, trailing blanks removed), latin1-decoded. */
  readonly name: string;
  /** `name` lowercased, for comparisons. */
  readonly key: string;
  /** Offset of the field's first byte. */
  readonly start: number;
  /** Offset just past the field's final line break (or its last byte when it has none). */
  readonly end: number;
  /**
   * Raw value: the bytes after the colon up to (not including) the final
   * line break, folding line breaks kept. Empty for a line without a colon.
   */
  readonly value: Buffer;
}

/** One Content-Type / Content-Disposition parameter. */
export interface MimeParam {
  /**
   * Name as Dovecot reports it in BODYSTRUCTURE: as written, RFC 2231
   * sections merged into `name` (plain) or `name*` (any section extended).
   */
  readonly name: Buffer;
  /**
   * Value as Dovecot reports it: unquoted; merged RFC 2231 extended values
   * stay percent-encoded behind their `charset'language'` prefix.
   */
  readonly value: Buffer;
  /** Lowercased name without RFC 2231 `*` suffixes, e.g. `filename`. */
  readonly key: string;
  /** The value fully decoded to text (RFC 2231 charset + percent decoding, RFC 2047 words). */
  readonly decoded: string;
}

/** The media type of a part. */
export interface ContentType {
  /** Lowercased type for comparisons (`text`, `multipart`, ...). */
  readonly type: string;
  /** Lowercased subtype for comparisons (`plain`, `mixed`, ...); empty when missing. */
  readonly subtype: string;
  /** Type as written in the header; null when the type is a default (no usable header). */
  readonly rawType: Buffer | null;
  /** Subtype as written; null when defaulted. */
  readonly rawSubtype: Buffer | null;
  /** Parameters in Dovecot's order (plain ones as written, then merged RFC 2231 ones). */
  readonly params: readonly MimeParam[];
}

/** A parsed Content-Disposition header. */
export interface Disposition {
  /** Lowercased disposition type (`inline`, `attachment`, ...). */
  readonly type: string;
  /** Disposition type as written. */
  readonly rawType: Buffer;
  readonly params: readonly MimeParam[];
}

/**
 * `leaf`: a single body; `multipart`: `children` hold the parts;
 * `message`: message/rfc822 (or message/global) with `message` holding the
 * encapsulated message.
 */
export type MimeKind = 'leaf' | 'multipart' | 'message';

/** One entity (message or body part) of a MIME tree. */
export interface MimeNode {
  readonly kind: MimeKind;
  /** Nesting depth: 0 for the message itself. */
  readonly depth: number;
  /** Offset of the header's first byte. */
  readonly headerStart: number;
  /**
   * Offset just past the header block, the separating blank line included
   * (RFC 3501 HEADER / MIME sections). Equal to `bodyStart`. A header that
   * runs into a delimiter of an enclosing multipart ends before that
   * delimiter's line break (a blank line right before it is that line
   * break): no blank line is reported that the message does not have.
   */
  readonly headerEnd: number;
  /** Offset of the body's first byte. */
  readonly bodyStart: number;
  /** Offset just past the body's last byte (a multipart delimiter's leading line break excluded). */
  readonly bodyEnd: number;
  /** Header fields in message order. */
  readonly fields: readonly HeaderField[];
  /**
   * Whether Content-* headers apply: always for parts of a multipart, and for
   * a message when it has a MIME-Version or a Content-Type header (Dovecot).
   */
  readonly isMime: boolean;
  readonly contentType: ContentType;
  /** Content-Transfer-Encoding token as written; null when absent or invalid. */
  readonly encoding: Buffer | null;
  /** Lowercased transfer encoding, `7bit` when absent. */
  readonly encodingKey: string;
  /** Raw (still folded) Content-ID value, or null. */
  readonly id: Buffer | null;
  /** Raw (still folded) Content-Description value, or null. */
  readonly description: Buffer | null;
  /** Raw Content-MD5 value, or null. */
  readonly md5: Buffer | null;
  /** Raw Content-Location value, or null. */
  readonly location: Buffer | null;
  readonly disposition: Disposition | null;
  /** Content-Language tags, or null. */
  readonly language: readonly Buffer[] | null;
  /** multipart boundary (bytes), or null. */
  readonly boundary: Buffer | null;
  /** Body size in bytes (`bodyEnd - bodyStart`). */
  readonly size: number;
  /** Number of LF-terminated lines in the body (as Dovecot counts them). */
  readonly lines: number;
  /** Parts of a multipart (empty otherwise). */
  readonly children: readonly MimeNode[];
  /** Encapsulated message of a message/rfc822 part, else null. */
  readonly message: MimeNode | null;
}
