/**
 * The i;unicode-casemap collation (RFC 5051): SORT and THREAD must use it
 * for strings (RFC 5256 §2.1 via I18NLEVEL=1, RFC 5255), and SEARCH's
 * substring keys match with it (RFC 5255 §4.2; RFC 3501 only asks for
 * case-insensitive matching, and this is the case-insensitivity a server
 * advertising I18NLEVEL=1 must have, so the core uses it always).
 *
 * RFC 5051 §2: each character is mapped with its simple titlecase mapping
 * (UnicodeData.txt field 14), the result is put into NFKD, and two such
 * strings are compared octet by octet in UTF-8. What this implementation
 * does to get there:
 * - ASCII text: titlecase is uppercase and NFKD changes nothing, so the key
 *   is `toUpperCase()`.
 * - Otherwise per code point: JavaScript has no titlecase, so the simple
 *   uppercase mapping stands in for it (`toUpperCase()` when that gives one
 *   code point), except where titlecase and uppercase differ: the Latin
 *   digraphs DŽ/LJ/NJ/DZ map to their title forms (U+01C5, U+01C8, U+01CB,
 *   U+01F2), Georgian Mkhedruli stays as it is (its uppercase is Mtavruli,
 *   its titlecase itself), and the Greek letters with ypogegrammeni, whose
 *   full uppercase is two characters, map to their single title forms
 *   (U+1F80 → U+1F88, U+1FB3 → U+1FBC ...). Characters whose only uppercase
 *   is several characters (ß, ŉ, the ﬁ ligature) have no simple mapping and
 *   stay as they are (then NFKD turns ﬁ into lower-case "fi", as RFC 5051
 *   implies).
 * - Then `normalize('NFKD')`.
 * - UTF-8 octet order is code point order, which UTF-16 code unit order (JS
 *   `<`) is not above U+D7FF, so a non-ASCII key is kept as its UTF-8 bytes
 *   spelled as latin1 code units; ASCII keys are the same either way, and
 *   plain `<` then compares every key as RFC 5051 does.
 *
 * Dovecot 2.3 orders the same except for a few characters it decomposes
 * only one level or not at all (U+212B ANGSTROM SIGN, the title digraphs,
 * Greek with ypogegrammeni); here they get full NFKD as RFC 5051 says
 * (test/dovecot/sort-thread.test.ts compares the rest).
 */

/** Titlecase where it is not what `toUpperCase()` gives for one code point. */
function titlecaseOf(cp: number): number | undefined {
  if (cp >= 0x01c4 && cp <= 0x01cc) return 0x01c5 + 3 * Math.floor((cp - 0x01c4) / 3);
  if (cp >= 0x01f1 && cp <= 0x01f3) return 0x01f2;
  // Georgian Mkhedruli: titlecase is the letter itself (Unicode 11).
  if ((cp >= 0x10d0 && cp <= 0x10fa) || (cp >= 0x10fd && cp <= 0x10ff)) return cp;
  // Greek with ypogegrammeni: the single title forms (uppercase is two letters).
  if ((cp >= 0x1f80 && cp <= 0x1f87) || (cp >= 0x1f90 && cp <= 0x1f97) || (cp >= 0x1fa0 && cp <= 0x1fa7)) return cp + 8;
  if ((cp >= 0x1f88 && cp <= 0x1f8f) || (cp >= 0x1f98 && cp <= 0x1f9f) || (cp >= 0x1fa8 && cp <= 0x1faf)) return cp;
  if (cp === 0x1fb3) return 0x1fbc;
  if (cp === 0x1fc3) return 0x1fcc;
  if (cp === 0x1ff3) return 0x1ffc;
  return undefined;
}

/** One non-ASCII character's simple titlecase mapping, the character itself where it has none. */
function titlecaseChar(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const special = titlecaseOf(cp);
  if (special !== undefined) return String.fromCodePoint(special);
  const upper = ch.toUpperCase();
  // A multi-character uppercase is a full mapping only: no simple one, the character stays.
  return upper.length === 1 || (upper.length === 2 && upper.codePointAt(0)! > 0xffff) ? upper : ch;
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const LOWER_ASCII = /[a-z]+/g;
// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\x00-\x7f]/gu;

const upper = (s: string): string => s.toUpperCase();

/**
 * A string mapped as RFC 5051 §2 says (titlecase, then NFKD): two strings
 * are equal under i;unicode-casemap exactly when their maps are, and one is
 * a substring of the other's (RFC 4790 §4.2.2) when its map is a substring
 * of the other's map.
 */
export function casemap(text: string): string {
  if (ASCII.test(text)) return text.toUpperCase();
  return text.replace(LOWER_ASCII, upper).replace(NON_ASCII, titlecaseChar).normalize('NFKD');
}

/**
 * The i;unicode-casemap sort key of a string: two keys compare with `<`
 * and `===` exactly as RFC 5051 compares the strings.
 */
export function collationKey(text: string): string {
  if (ASCII.test(text)) return text.toUpperCase();
  return Buffer.from(casemap(text), 'utf8').toString('latin1');
}

/** -1, 0 or 1 for two keys made by `collationKey` (or any two strings, by code unit). */
export function compareKeys(a: string, b: string): number {
  return a === b ? 0 : a < b ? -1 : 1;
}
