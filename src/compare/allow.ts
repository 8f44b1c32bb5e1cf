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
 * either server) that has no equal on the other side.
 */
export interface AllowRule {
  command: string;
  pattern: RegExp;
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
    try {
      pattern = new RegExp(m[2]!);
    } catch (err) {
      throw new AllowListError(`${file} line ${i + 1}: ${(err as Error).message}`);
    }
    rules.push({ command: m[1]!.toUpperCase().replace(/_/g, ' '), pattern, reason: reason.join(' '), line: i + 1 });
  });
  return rules;
}

/** The rule that allows `response` in answer to `command`, if any. */
export function allowedBy(rules: readonly AllowRule[], command: string, response: string): AllowRule | undefined {
  return rules.find((r) => (r.command === '*' || r.command === command) && r.pattern.test(response));
}
