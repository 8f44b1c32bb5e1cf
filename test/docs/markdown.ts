/**
 * The little of Markdown the docs tests need: headings and links outside
 * code, and the anchor GitHub gives a heading.
 */

export interface Heading {
  text: string;
  line: number;
}

export interface Link {
  target: string;
  line: number;
  /** `![alt](target)`: a picture shown in the page, not a link to follow. */
  image: boolean;
}

/** The lines of a page that are prose: fenced code blocks become empty lines (line numbers stay). */
function proseLines(markdown: string): string[] {
  const lines = markdown.split('\n');
  let fence: string | null = null;
  return lines.map((line) => {
    const open = /^\s{0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === null) {
      if (open) {
        fence = open[1]!;
        return '';
      }
      return line;
    }
    if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length && line.trim() === open[1]) fence = null;
    return '';
  });
}

/** Inline code spans replaced by their text without markup characters, so `[x](y)` in code is no link. */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)([\s\S]*?)\1/g, (_m, _ticks: string, code: string) => code.replace(/[[\]()]/g, ' '));
}

/** ATX headings (`## Title`) outside code blocks. */
export function headingsOf(markdown: string): Heading[] {
  const out: Heading[] = [];
  proseLines(markdown).forEach((line, i) => {
    const m = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (m) out.push({ text: m[1]!, line: i + 1 });
  });
  return out;
}

/** Targets of inline links and images, and of reference definitions, outside code. */
export function linksOf(markdown: string): Link[] {
  const out: Link[] = [];
  proseLines(markdown).forEach((raw, i) => {
    const line = withoutCodeSpans(raw);
    for (const m of line.matchAll(/(!?)\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[2]!, line: i + 1, image: m[1] === '!' });
    const def = /^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(line);
    if (def) out.push({ target: def[1]!, line: i + 1, image: false });
  });
  return out;
}

/**
 * The anchor GitHub makes for a heading (github-slugger): the rendered text
 * (link and emphasis markup gone, code spans' text kept), lower case,
 * punctuation dropped but for `-` and `_`, each space a `-`.
 */
export function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`+/g, '')
    .replace(/(\*+)(\S[\s\S]*?)\1/g, '$2')
    .replace(/<[^>]+>/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}
