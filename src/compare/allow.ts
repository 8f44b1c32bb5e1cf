/**
 * The allow-list: known differences that do not fail a compare. A text
 * file, one rule a line:
 *
 *     # why this difference is expected (comments are kept with the rule)
 *     SELECT  ^\* OK \[PERMANENTFLAGS
 *     *       ^\* CAPABILITY
 *
 * The first word is the command the difference belongs to (`UID FETCH` is
 * written `UID_FETCH`; `*` any command, `GREETING` the greeting, `FILL` the
 * APPENDs that put the mailbox on both servers); the rest of the line is a
 * regular expression matched against the normalized response line (of
 * either server) that has no equal on the other side: such a line is
 * allowed. A rule whose expression starts with `~ ` is a mask instead:
 * what it matches is cut out of the unequal lines of both servers, and
 * lines that are then equal are allowed (`STORE ~ UID \d+ ` lets a server
 * add UID to its FETCH responses and nothing else).
 */
export interface AllowRule {
  command: string;
  pattern: RegExp;
  /** A mask rule (`~ REGEX`): cuts what it matches out of both sides' lines before they are paired again. */
  mask: boolean;
  /** The comment lines above the rule. */
  reason: string;
  /** Line number in the file, for messages. */
  line: number;
}

export class AllowListError extends Error {}

export function parseAllowList(text: string, file = 'allow-list'): AllowRule[] {
  const rules: AllowRule[] = [];
  let reason: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') {
      reason = [];
      return;
    }
    if (line.startsWith('#')) {
      reason.push(line.replace(/^#\s?/, ''));
      return;
    }
    const m = /^(\S+)\s+(.+)$/.exec(line);
    if (!m) throw new AllowListError(`${file} line ${i + 1}: expected "COMMAND REGEX", got ${JSON.stringify(line)}`);
    let pattern: RegExp;
    const mask = m[2]!.startsWith('~ ');
    try {
      pattern = new RegExp(mask ? m[2]!.slice(2) : m[2]!, mask ? 'g' : '');
    } catch (err) {
      throw new AllowListError(`${file} line ${i + 1}: ${(err as Error).message}`);
    }
    rules.push({ command: m[1]!.toUpperCase().replace(/_/g, ' '), pattern, mask, reason: reason.join(' '), line: i + 1 });
  });
  return rules;
}

/** The rule that allows `response` in answer to `command`, if any. */
export function allowedBy(rules: readonly AllowRule[], command: string, response: string): AllowRule | undefined {
  return rules.find((r) => !r.mask && (r.command === '*' || r.command === command) && r.pattern.test(response));
}

/** The mask rules that apply to `command`. */
export function masksFor(rules: readonly AllowRule[], command: string): AllowRule[] {
  return rules.filter((r) => r.mask && (r.command === '*' || r.command === command));
}

/** `line` with what each mask matches cut out (blanks around a cut closed up). */
export function masked(masks: readonly AllowRule[], line: string): string {
  let out = line;
  for (const m of masks) out = out.replace(m.pattern, '');
  return out.replace(/ {2,}/g, ' ').replace(/ \)/g, ')').trim();
}
