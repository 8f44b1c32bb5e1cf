/**
 * Response text stays ASCII at the source. resp-text is TEXT-CHARs (RFC 3501
 * §9: 7-bit), so the serializer shows anything else as `?`: a `§` written
 * into a BAD text reached clients as `(RFC 5465 ?5)`. Every string literal
 * in src/ is read with the TypeScript parser (comments are not string
 * literals, so they may say §), and one with a non-ASCII character fails
 * the test unless its file is listed below with the reason its strings
 * never go into an IMAP response.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { rawSession, startServer } from '../helpers/server.js';

/** The TypeScript sources (this test runs from build/test/imap/). */
const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

/** Files whose non-ASCII strings are never response text, and why. */
const NOT_RESPONSE_TEXT = new Map<string, string>([
  ['cli.ts', 'help text for a terminal'],
  ['client-check/rules.ts', "the rule table's rfc column, shown in REST and JUnit reports; a strict answer carries the finding's own text"],
  ['client-check/pop3-rules.ts', "the POP3 rule table's rfc column, as client-check/rules.ts; POP3 answers are not IMAP responses either"],
  ['generator/charsets.ts', 'display names in many scripts that the generator writes into message headers: mail data, not text of ours'],
  ['generator/bodies.ts', 'message bodies the generator writes: mail data, not text of ours'],
  ['generator/headers.ts', 'header fields the generator writes: mail data, not text of ours'],
  ['generator/malformed.ts', "the malformed catalogue's messages and its cases' RFC column (rookery generate --list-cases): mail data and terminal text"],
  ['extensions/preview/text.ts', 'the typographic characters PREVIEW replaces in message text: data, not text of ours'],
]);

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Line and text of every string literal (template pieces included) of `source` holding a non-ASCII character. */
function nonAsciiStrings(source: ts.SourceFile): { line: number; text: string }[] {
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      if (/[^\x00-\x7f]/.test(node.text)) found.push({ line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const parse = (file: string, text: string): ts.SourceFile => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

test('no string literal in src/ that can become response text holds a non-ASCII character', () => {
  const files = sources(SRC);
  assert.ok(files.length > 100, `only ${files.length} sources found under ${SRC}`);
  const offending: string[] = [];
  const used = new Set<string>();
  for (const file of files) {
    const found = nonAsciiStrings(parse(file, readFileSync(file, 'utf8')));
    if (found.length === 0) continue;
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    if (NOT_RESPONSE_TEXT.has(rel)) used.add(rel);
    else offending.push(...found.map((f) => `${rel}:${f.line}: ${JSON.stringify(f.text.slice(0, 100))}`));
  }
  assert.deepEqual(offending, [], 'write "section 5" for "§5", "->" for an arrow: the serializer would send "?"');
  // An exemption nothing needs any more is one less place a non-ASCII text could hide.
  assert.deepEqual([...NOT_RESPONSE_TEXT.keys()].filter((f) => !used.has(f)), []);
});

test('the scan sees string literals and template pieces, not comments', () => {
  const probe = parse('probe.ts', "// § in a comment\nconst a = 'RFC 5465 §5';\nconst b = `x ${a} → y`;\nconst c = 'plain';\n");
  assert.deepEqual(nonAsciiStrings(probe), [
    { line: 2, text: 'RFC 5465 §5' },
    { line: 3, text: ' → y' },
  ]);
});

test('a BAD that cites an RFC section reaches the client as written (RFC 5465 section 6.1), over a real socket', async () => {
  const { server, port } = await startServer({ plugins: ['NOTIFY'] });
  try {
    const c = await rawSession(port);
    const lines = await c.command('NOTIFY SET (selected (MessageNew MessageExpunge)) (selected-delayed (MessageNew MessageExpunge))');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^T\d+ BAD .*\(RFC 5465 section 6\.1\)$/);
    assert.doesNotMatch(lines[0]!, /\?/);
    c.close();
  } finally {
    await server.stop();
  }
});
