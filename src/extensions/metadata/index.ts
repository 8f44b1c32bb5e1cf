/**
 * METADATA (RFC 5464): server and mailbox entries. It requires
 * METADATA-SERVER, whose folder serves both plugins (the commands
 * GETMETADATA and SETMETADATA, the REST routes, the storage key
 * `metadata`): with this plugin loaded, mailbox names other than `""`
 * are served and the capability is `METADATA` instead of
 * `METADATA-SERVER`. Its options (`pluginOptions.METADATA`: maxSize,
 * maxEntries, private) are METADATA-SERVER's, and win key by key when both
 * are given. `server.extension('METADATA')` is the same control API as
 * `server.extension('METADATA-SERVER')`.
 */
import type { Extension } from '../extension.js';
import { always } from '../shared.js';
import { metadataOptions, type MetadataApi } from '../metadata-server/index.js';

export const extension: Extension<MetadataApi> = {
  name: 'METADATA',
  requires: ['METADATA-SERVER'],
  options: metadataOptions,
  // The API of METADATA-SERVER, looked up at each call (setup order is not relied on).
  setup: ({ server }) => {
    const owner = (): MetadataApi => server.extension('METADATA-SERVER')!;
    return {
      getMetadata: (path, scope) => owner().getMetadata(path, scope),
      setMetadata: (path, entries, scope) => owner().setMetadata(path, entries, scope),
      get limits() {
        return owner().limits;
      },
      setLimits: (limits) => owner().setLimits(limits),
      get mailboxEntries() {
        return owner().mailboxEntries;
      },
      onMetadataChange: (listener) => owner().onMetadataChange(listener),
    };
  },
  capabilities: always('METADATA'),
};
