/**
 * JSON Schema (draft 2020-12) of the storage option, for editors and for
 * callers in other languages. It describes the JSON form (a message's `raw`
 * is a string there; in-process callers may also pass a Uint8Array, and an
 * internal date may be a Date). `resolveOptions` is the authority: it also
 * reports likely typos of known keys, which a schema cannot express, and
 * keys that are not typos are allowed here as there.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** An RFC 3501 flag: an atom, optionally after a backslash. */
const FLAG_PATTERN = '^\\\\?[^\\x00-\\x20\\x7f-\\uffff(){%*"\\\\\\]]+$';
const DATE_TIME_PATTERN = '^ ?\\d{1,2}-[A-Za-z]{3}-\\d{4} \\d{2}:\\d{2}:\\d{2} [+-]\\d{4}$';

const flagList = (description: string): JsonObject => ({
  type: 'array',
  description,
  items: { type: 'string', pattern: FLAG_PATTERN },
});

export const storageSchema: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Rookery storage',
  description:
    'Initial mailboxes and messages. "INBOX" (any case) is a mailbox; every other top-level key is a namespace prefix ("" is the personal namespace). Default: {"INBOX": {}, "": {}}.',
  type: 'object',
  properties: {
    INBOX: { $ref: '#/$defs/mailbox' },
  },
  patternProperties: {
    '^[Ii][Nn][Bb][Oo][Xx]$': { $ref: '#/$defs/mailbox' },
  },
  additionalProperties: { $ref: '#/$defs/namespace' },
  $defs: {
    namespace: {
      type: 'object',
      description:
        'A namespace. Mailbox paths are the prefix followed by the folder names joined with the separator.',
      properties: {
        type: {
          enum: ['personal', 'user', 'shared'],
          description: 'Default "personal" for the "" prefix, "shared" for others.',
        },
        separator: {
          type: 'string',
          pattern: '^[!-%\'-/:-@\\[-`{-~]$',
          description:
            'Hierarchy delimiter, one printable ASCII character other than a letter, digit or "&". Default "/" (or the last character of a prefix such as "#news.").',
        },
        folders: { $ref: '#/$defs/folders' },
      },
      additionalProperties: true,
    },
    folders: {
      type: 'object',
      description:
        'Child mailboxes by name (modified UTF-7, without the separator). Names are data: any name is allowed.',
      propertyNames: { minLength: 1 },
      additionalProperties: { $ref: '#/$defs/mailbox' },
    },
    mailbox: {
      type: 'object',
      description:
        'A mailbox. Keys beyond these (extension-owned such as "acl" and "metadata", or any other) are kept as they are.',
      properties: {
        messages: {
          type: 'array',
          description: 'Messages in ascending UID order.',
          items: { $ref: '#/$defs/message' },
        },
        folders: { $ref: '#/$defs/folders' },
        flags: flagList('Mailbox attributes such as "\\\\Noselect".'),
        subscribed: { type: 'boolean', default: true },
        uidvalidity: { type: 'integer', minimum: 1, maximum: 4294967295 },
        uidnext: { type: 'integer', minimum: 1, maximum: 4294967296 },
        HIGHESTMODSEQ: { type: 'integer', minimum: 1 },
        'special-use': {
          description: 'RFC 6154 special use, e.g. "\\\\Sent", or an array of them.',
          oneOf: [
            { type: 'string', pattern: '^\\\\' },
            { type: 'array', items: { type: 'string', pattern: '^\\\\' } },
          ],
        },
        permanentFlags: flagList('Flags clients may store permanently; "\\\\*" allows new keywords.'),
        import: {
          description:
            'Mail files whose messages follow "messages": a directory of .eml files, an mbox file or a Maildir (path relative to the working directory), or an array of them. Bytes are kept exactly.',
          oneOf: [
            { type: 'string', minLength: 1 },
            { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 } },
          ],
        },
        generate: {
          type: 'object',
          description:
            'Generated messages after "messages" and "import" (docs/generator.md): {"seed": 7, "count": 10000, "profile": "realistic" | "malformed", ...}. The same seed gives the same bytes on every machine.',
          properties: {
            seed: { type: 'integer', minimum: 0, maximum: 4294967295 },
            count: { type: 'integer', minimum: 0, maximum: 10000000 },
            profile: { enum: ['realistic', 'malformed'] },
            cases: { type: 'array', minItems: 1, items: { type: 'string' } },
            bodies: { type: 'object', additionalProperties: { type: 'number', minimum: 0 } },
            size: { $ref: '#/$defs/sizeRange' },
            attachmentSize: { $ref: '#/$defs/sizeRange' },
            appendLimit: { type: 'integer', minimum: 1 },
            threads: { type: 'object' },
            addresses: { type: 'object' },
            dates: { type: 'object' },
            flags: { type: 'object' },
            caseHeader: { type: 'boolean' },
          },
          additionalProperties: false,
        },
        acl: { type: 'object', description: 'ACL extension: rights by identifier.' },
        metadata: { type: 'object', description: 'METADATA extension: entries by name.' },
      },
      additionalProperties: true,
    },
    sizeRange: {
      description: 'Octets: a number, or a range {min, max} drawn log-uniformly.',
      oneOf: [
        { type: 'integer', minimum: 0 },
        { type: 'object', required: ['min', 'max'], properties: { min: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0 } }, additionalProperties: false },
      ],
    },
    message: {
      description: 'A message: its raw source as a string, or an object.',
      oneOf: [
        { type: 'string', description: 'Raw message source (UTF-8).' },
        {
          type: 'object',
          required: ['raw'],
          properties: {
            raw: { type: 'string', description: 'Raw message source, in the given encoding.' },
            encoding: {
              enum: ['utf-8', 'binary', 'base64'],
              default: 'utf-8',
              description: '"binary" is one character per byte (latin1).',
            },
            flags: flagList('Message flags, e.g. "\\\\Seen" or keywords.'),
            internaldate: {
              type: 'string',
              pattern: DATE_TIME_PATTERN,
              description: 'RFC 3501 date-time, "dd-Mon-yyyy hh:mm:ss +zzzz". Default: the server clock.',
            },
            uid: { type: 'integer', minimum: 1, maximum: 4294967295 },
            modseq: { type: 'integer', minimum: 1 },
          },
          additionalProperties: true,
        },
      ],
    },
  },
};

/**
 * JSON Schema of the storage option with `userMailboxes: true`: each user's
 * tree (the one-tree shape) under `users`, the shared namespaces under `shared`.
 */
export const userStorageSchema: JsonObject = (() => {
  const { $schema, title: _title, description: _description, $defs, ...tree } = storageSchema;
  return {
    $schema: $schema ?? null,
    title: 'Rookery storage (userMailboxes)',
    description:
      'With userMailboxes: "users" maps a user name to that user\'s own tree (INBOX and personal namespaces; a user left out starts with an empty INBOX); "shared" holds the shared namespaces (type "shared") and server-wide fields on "".',
    type: 'object',
    properties: {
      users: { type: 'object', additionalProperties: { $ref: '#/$defs/tree' } },
      shared: { $ref: '#/$defs/tree' },
    },
    additionalProperties: false,
    $defs: { ...($defs as JsonObject), tree: { ...tree, description: 'A mailbox tree in the one-tree storage shape.' } },
  };
})();
