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
 * - `Utf8Text`      → text quoted even with UTF-8 in it (IMAP4rev2 / UTF8=ACCEPT
 *                     quoted strings), a literal only for NUL, CR or LF
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

/** Text for a session that takes UTF-8 in quoted strings (RFC 9051 QUOTED-CHAR, RFC 6855). */
export class Utf8Text {
  constructor(readonly value: string) {}
}

export type ImapValue = null | number | string | Buffer | Atom | Literal | Utf8Text | ImapValue[];

export const atom = (value: string): Atom => new Atom(value);
export const literal = (data: Buffer, binary = false): Literal => new Literal(data, binary);
