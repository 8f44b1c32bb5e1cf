/**
 * The first two words of a line-protocol command (POP3, SMTP), as the
 * STARTTLS watch names it: a verb and, for AUTH, its mechanism. Null for a
 * line no command is: a ClientHello read as plain text (the
 * starttls-no-handshake attack) has control bytes.
 */
export function commandWords(line: Buffer): { verb: string; arg: string | undefined } | null {
  const text = line.toString('latin1', 0, Math.min(line.length, 256));
  if (/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f]/.test(text)) return null;
  const m = /^([A-Za-z][A-Za-z0-9-]{0,39})(?: ([A-Za-z0-9_-]+))?/.exec(text);
  if (!m) return null;
  return { verb: m[1]!.toUpperCase(), arg: m[2]?.toUpperCase() };
}
