/**
 * Every link between the pages works (issue 30 item 3). The README is a
 * front door that points into docs/, so a renamed heading or a moved page
 * must fail here instead of leaving a reader on GitHub at the top of a page
 * or on a 404. For README.md, RELEASING.md, examples/ and bench/ READMEs and every docs/*.md:
 *
 * - each relative link `[text](path)` names a file or folder that exists;
 * - each `#anchor` (alone, or after a .md path) is the GitHub slug of a
 *   heading of that page;
 * - a link (not an embedded `![picture](...)`) does not lead to a picture:
 *   a reader who follows "The dashboard" wants the page about it, and a
 *   picture to look at is embedded;
 * - no page has two headings with the same text: GitHub would give the
 *   second a `-1` slug, and a reader of the map could not tell them apart.
 *
 * Code (fenced blocks and inline spans) is not prose: `# comment` lines in a
 * shell block are no headings and `[x](y)` in a code span is no link.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { githubSlug, headingsOf, linksOf } from './markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

async function pages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).sort();
  return ['README.md', 'RELEASING.md', 'examples/README.md', 'bench/README.md', ...docs.map((n) => join('docs', n))].filter((p) => existsSync(join(ROOT, p)));
}

const slugCache = new Map<string, Promise<Set<string>>>();

/** The anchors GitHub makes for a page's headings (a repeated slug gets -1, -2, ... as GitHub does). */
function anchorsOf(page: string): Promise<Set<string>> {
  let anchors = slugCache.get(page);
  if (!anchors) {
    anchors = readFile(join(ROOT, page), 'utf8').then((text) => {
      const out = new Set<string>();
      const seen = new Map<string, number>();
      for (const h of headingsOf(text)) {
        const slug = githubSlug(h.text);
        const n = seen.get(slug) ?? 0;
        seen.set(slug, n + 1);
        out.add(n === 0 ? slug : `${slug}-${n}`);
      }
      return out;
    });
    slugCache.set(page, anchors);
  }
  return anchors;
}

describe('the slug rules match GitHub', () => {
  test('examples as GitHub renders them', () => {
    assert.equal(githubSlug('Waiting instead of sleeping'), 'waiting-instead-of-sleeping');
    assert.equal(githubSlug('Control API (`server.control`)'), 'control-api-servercontrol');
    assert.equal(githubSlug('Modes (`clientCheck`, `--client-check`)'), 'modes-clientcheck---client-check');
    assert.equal(githubSlug('Defects: real servers\' bugs as ready rules'), 'defects-real-servers-bugs-as-ready-rules');
    assert.equal(githubSlug('STATUS=SIZE'), 'statussize');
    assert.equal(githubSlug('AUTH=PLAIN, AUTH=XOAUTH2, AUTH=OAUTHBEARER'), 'authplain-authxoauth2-authoauthbearer');
    assert.equal(githubSlug('X-GM-EXT-1 (Gmail)'), 'x-gm-ext-1-gmail');
    assert.equal(githubSlug('I18NLEVEL=1'), 'i18nlevel1');
    assert.equal(githubSlug('outlook (Microsoft 365 / Exchange Online)'), 'outlook-microsoft-365--exchange-online');
    assert.equal(githubSlug('The [dashboard](x.md) *now*'), 'the-dashboard-now');
    assert.equal(githubSlug('snake_case stays'), 'snake_case-stays');
  });

  test('headings in code blocks are not headings, links in code are not links', () => {
    const text = '# Title\n\n```sh\n# a comment\ncurl [x](nowhere.md)\n```\n\nSee `[y](gone.md)` and [z](here.md#title).\n## Title two\n';
    assert.deepEqual(headingsOf(text).map((h) => h.text), ['Title', 'Title two']);
    assert.deepEqual(linksOf(text).map((l) => l.target), ['here.md#title']);
    assert.deepEqual(linksOf('![pic](a.png) and [page](a.md)').map((l) => [l.target, l.image]), [['a.png', true], ['a.md', false]]);
  });
});

for (const page of await pages()) {
  describe(page, () => {
    test('no heading is named twice', async () => {
      const text = await readFile(join(ROOT, page), 'utf8');
      const lines = new Map<string, number>();
      for (const h of headingsOf(text)) {
        const key = h.text.trim().toLowerCase();
        assert.ok(!lines.has(key), `${page}:${h.line}: the heading "${h.text}" is already at line ${lines.get(key)}`);
        lines.set(key, h.line);
      }
    });

    test('every relative link and #anchor resolves', async () => {
      const text = await readFile(join(ROOT, page), 'utf8');
      const broken: string[] = [];
      for (const { target, line, image } of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // https:, mailto:, ...
        const hash = target.indexOf('#');
        const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
        const anchor = hash < 0 ? '' : decodeURIComponent(target.slice(hash + 1));
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) {
          broken.push(`${page}:${line}: ${target}: ${file} does not exist`);
          continue;
        }
        if (!image && /\.(png|jpe?g|gif|svg|webp)$/i.test(file)) {
          broken.push(`${page}:${line}: ${target}: a link to a picture; link the page about it, or embed the picture with ![...](...)`);
          continue;
        }
        if (!anchor) continue;
        if (!file.endsWith('.md')) {
          broken.push(`${page}:${line}: ${target}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!(await anchorsOf(file)).has(anchor)) broken.push(`${page}:${line}: ${target}: ${file} has no heading with the anchor #${anchor}`);
      }
      assert.deepEqual(broken, []);
    });
  });
}
