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
 * APPENDs that put the mailbox on both servers), optionally with the side
 * whose lines it allows (`STORE:target`, `STORE:reference`; both without);
 * the rest of the line is a
 * regular expression matched against the normalized response line (of
 * either server) that has no equal on the other side: such a line is
 * allowed. A rule whose expression starts with `~ ` is a mask instead:
 * what it matches is cut out of the unequal lines of both servers, and
 * lines that are then equal are allowed (`STORE ~ UID \d+ ` lets a server
 * add UID to its FETCH responses and nothing else).
 */
export type Side = 'reference' | 'target';

export interface AllowRule {
  command: string;
  /** Only lines of this server; null: either. */
  side: Side | null;
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
    const [name, side, extra] = m[1]!.split(':');
    if (extra !== undefined || (side !== undefined && side !== 'reference' && side !== 'target')) {
      throw new AllowListError(`${file} line ${i + 1}: the side after ":" is "reference" or "target", got ${JSON.stringify(m[1])}`);
    }
    if (mask && side !== undefined) throw new AllowListError(`${file} line ${i + 1}: a mask rule applies to both sides; drop ":${side}"`);
    rules.push({ command: name!.toUpperCase().replace(/_/g, ' '), side: (side as Side | undefined) ?? null, pattern, mask, reason: reason.join(' '), line: i + 1 });
  });
  return rules;
}

/** The rule that allows `response` in answer to `command`, if any. */
export function allowedBy(rules: readonly AllowRule[], command: string, response: string, side: Side | null = null): AllowRule | undefined {
  return rules.find((r) => !r.mask && (r.side === null || r.side === side) && (r.command === '*' || r.command === command) && r.pattern.test(response));
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
