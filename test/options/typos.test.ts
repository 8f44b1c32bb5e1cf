import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { editDistance, suggestKey } from '../../src/options/typos.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and transpositions', () => {
    assert.equal(editDistance('messages', 'messages'), 0);
    assert.equal(editDistance('mesages', 'messages'), 1);
    assert.equal(editDistance('mesasges', 'messages'), 1);
    assert.equal(editDistance('flgas', 'flags'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('kitten', 'sitting'), 3);
  });

  it('stops early past the limit', () => {
    assert.equal(editDistance('abcdefgh', 'zzzzzzzz', 2), 3);
    assert.equal(editDistance('a', 'abcdef', 1), 2);
  });
});

describe('suggestKey', () => {
  const known = ['messages', 'folders', 'flags', 'uid', 'raw', 'HIGHESTMODSEQ'];
  it('finds close keys', () => {
    assert.equal(suggestKey('mesages', known), 'messages');
    assert.equal(suggestKey('Messages', known), 'messages');
    assert.equal(suggestKey('highestmodseq', known), 'HIGHESTMODSEQ');
    assert.equal(suggestKey('folder', known), 'folders');
    assert.equal(suggestKey('uids', known), 'uid');
    assert.equal(suggestKey('raws', known), 'raw');
  });

  it('lets distant keys through', () => {
    assert.equal(suggestKey('acl', known), undefined);
    assert.equal(suggestKey('comment', known), undefined);
    assert.equal(suggestKey('rawx2', known), undefined);
    assert.equal(suggestKey('metadata', known), undefined);
  });

  it('allows two edits only for keys of five or more characters', () => {
    assert.equal(suggestKey('mssges', known), 'messages');
    assert.equal(suggestKey('fgs', known), undefined);
  });
});
