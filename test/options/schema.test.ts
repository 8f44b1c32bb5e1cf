import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { storageSchema } from '../../src/options/schema.js';

type Node = Record<string, unknown>;

describe('storageSchema', () => {
  it('is plain JSON', () => {
    const text = JSON.stringify(storageSchema);
    assert.deepEqual(JSON.parse(text), storageSchema);
    assert.equal(storageSchema.$schema, 'https://json-schema.org/draft/2020-12/schema');
  });

  it('describes mailboxes, folders, namespaces and messages', () => {
    const defs = storageSchema.$defs as Record<string, Node>;
    const mailbox = defs.mailbox!.properties as Record<string, Node>;
    for (const key of ['messages', 'folders', 'flags', 'subscribed', 'uidvalidity', 'uidnext', 'HIGHESTMODSEQ', 'special-use', 'permanentFlags']) {
      assert.ok(mailbox[key], key);
    }
    assert.deepEqual((mailbox.messages!.items as Node).$ref, '#/$defs/message');
    assert.deepEqual(mailbox.folders, { $ref: '#/$defs/folders' });
    assert.deepEqual(defs.folders!.additionalProperties, { $ref: '#/$defs/mailbox' });
    assert.deepEqual(storageSchema.additionalProperties, { $ref: '#/$defs/namespace' });
    const object = (defs.message!.oneOf as Node[])[1]!;
    assert.deepEqual(object.required, ['raw']);
    assert.deepEqual(Object.keys(object.properties as Node), ['raw', 'encoding', 'flags', 'internaldate', 'uid', 'modseq']);
  });

  it('has patterns that compile as unicode regular expressions and match like the validator', () => {
    const patterns: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === 'pattern' && typeof v === 'string') patterns.push(v);
          else if (k === 'patternProperties') Object.keys(v as Node).forEach((p) => patterns.push(p)), walk(Object.values(v as Node));
          else walk(v);
        }
      }
    };
    walk(storageSchema);
    assert.ok(patterns.length >= 4);
    for (const p of patterns) new RegExp(p, 'u');
    const defs = storageSchema.$defs as Record<string, Node>;
    const flag = new RegExp(((defs.mailbox!.properties as Record<string, Node>).flags!.items as Node).pattern as string, 'u');
    assert.ok(flag.test('\\Seen') && flag.test('$Label') && !flag.test('a b') && !flag.test('\\\\x') && !flag.test('x]'));
    const sep = new RegExp(((defs.namespace!.properties as Record<string, Node>).separator as Node).pattern as string, 'u');
    assert.ok(sep.test('/') && sep.test('.') && sep.test('[') && !sep.test('a') && !sep.test('&') && !sep.test('5'));
    const date = new RegExp((((defs.message!.oneOf as Node[])[1]!.properties as Record<string, Node>).internaldate!.pattern) as string, 'u');
    assert.ok(date.test('14-Sep-2013 21:22:28 -0300') && !date.test('yesterday'));
  });
});
