/**
 * Typed values of IMAP responses. Everything that goes out on the wire is
 * built from these and turned into bytes by the serializer, which chooses
 * quoted string vs literal so no caller has to.
 *
 * - `null`          → NIL
 * - `number`        → a number
 * - `string`        → text, UTF-8 encoded; quoted when it can be, else a literal
 * - `Buffer`        → bytes of a string; quoted when they can be, else a literal
 * - `Atom`          → sent as it is (flags, keywords, labels such as `BODY[1]<0>`);
 *                     one holding CR, LF, NUL or 8-bit is a bug the serializer throws on
 *                     (`astring()` makes an atom only of text that can be one)
 * - `Literal`       → always a literal (message data); `binary` sends `~{n}`
 * - `Utf8Text`      → text quoted even when it is not ASCII (RFC 6855, for a
 *                     session that enabled UTF8=ACCEPT); a literal only for CR, LF, NUL
 * - `Raw`           → bytes sent exactly as they are, unchecked: only script
 *                     rules that break the grammar on purpose make one (`mutate`)
 * - `ImapValue[]`   → a parenthesized list
 */
export class Atom {
  constructor(readonly value: string) {}
}

export class Literal {
  constructor(
    readonly data: Buffer,
    readonly binary = false,
  ) {}
}

export class Utf8Text {
  constructor(readonly value: string) {}
}

export class Raw {
  constructor(readonly data: Buffer) {}
}

export type ImapValue = null | number | string | Buffer | Atom | Literal | Utf8Text | Raw | ImapValue[];

export const atom = (value: string): Atom => new Atom(value);
export const literal = (data: Buffer, binary = false): Literal => new Literal(data, binary);
export const utf8Text = (value: string): Utf8Text => new Utf8Text(value);

/** ASTRING-CHAR (RFC 3501 §9, RFC 9051 §9): ATOM-CHAR or `]`; no CTL, SP, 8-bit or `( ) { % * " \`. */
const ASTRING_ATOM = /^[^\x00-\x20\x7f-\uffff(){%*"\\]+$/;
/** Atoms a generic response tokenizer reads as something other than a string: NIL, and numbers. */
const LOOKS_LIKE_OTHER = /^(?:nil|\d+)$/i;

/**
 * An `astring` (ACL identifiers and rights, METADATA entry names): an atom
 * where the text is one, as the RFCs' examples write them (RFC 4314 §3.6
 * `* ACL INBOX Fred rwipslxetad`), otherwise a string, which the
 * serializer quotes or sends as a literal. A client that keeps the raw
 * token (IMAPClient's `getacl()`) then sees the bare name. `NIL` and
 * all-digit text stay quoted: both are valid atoms, but tokenizers that do
 * not know the field is an astring turn them into None and an integer.
 */
export function astring(value: string): ImapValue {
  return ASTRING_ATOM.test(value) && !LOOKS_LIKE_OTHER.test(value) ? new Atom(value) : value;
}

/**
 * The empty list of responses, shared and frozen: what a point or a drain
 * that has nothing to say returns, so saying nothing allocates nothing (it
 * runs for every idling session of a mailbox that changes).
 */
export const NO_RESPONSES: readonly (readonly ImapValue[])[] = Object.freeze([]);
