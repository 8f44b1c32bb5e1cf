/**
 * Typed values of IMAP responses. Everything that goes out on the wire is
 * built from these and turned into bytes by the serializer, which chooses
 * quoted string vs literal so no caller has to.
 *
 * - `null`          → NIL
 * - `number`        → a number
 * - `string`        → text, UTF-8 encoded; quoted when it can be, else a literal
 * - `Buffer`        → bytes of a string; quoted when they can be, else a literal
 * - `Atom`          → sent as it is (flags, keywords, labels such as `BODY[1]<0>`)
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
