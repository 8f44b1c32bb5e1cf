/**
 * APPENDLIMIT (RFC 7889): the largest message APPEND accepts, in octets.
 * `pluginOptions.APPENDLIMIT.limit` sets it (default: the `maxLiteral`
 * option, the limit the server enforces anyway). Advertised as
 * `APPENDLIMIT=<n>` and as the STATUS item `APPENDLIMIT`. An APPEND whose
 * literal is larger is refused with `NO [TOOBIG]` as soon as the literal's
 * size is announced, before any of its bytes are read; the control API's
 * `addMessage` with `checks: true` (REST: 413 TOOBIG) is refused the same way.
 */
import { ServiceError } from '../../errors.js';
import type { Extension } from '../extension.js';

/** The control API of APPENDLIMIT: `server.extension('APPENDLIMIT')`. */
export interface AppendLimitApi {
  /** The limit in octets. */
  readonly limit: number;
  /** Changes the limit (octets, at least 1) for every later APPEND; new sessions see the new capability. */
  setLimit(limit: number): void;
}

declare module '../extension.js' {
  interface ExtensionApis {
    APPENDLIMIT: AppendLimitApi;
  }
}

interface State extends AppendLimitApi {
  value: number;
}

function tooBig(size: number, limit: number): string {
  return `Message too large: ${size} octets, the limit is ${limit} (APPENDLIMIT)`;
}

export const extension: Extension<State> = {
  name: 'APPENDLIMIT',
  options: {
    type: 'object',
    properties: { limit: { type: 'integer', minimum: 1, description: 'Largest message APPEND accepts, in octets' } },
    additionalProperties: false,
  },
  setup: ({ server, options }) => {
    const state: State = {
      value: (options.limit as number | undefined) ?? server.options.maxLiteral,
      get limit() {
        return state.value;
      },
      setLimit(limit: number) {
        if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
          throw new ServiceError('INVALID', `limit: expected a positive integer, got ${String(limit)}`);
        }
        state.value = limit;
      },
    };
    return state;
  },
  capabilities: (_session, state) => [`APPENDLIMIT=${state.value}`],
  statusItems: [{ name: 'APPENDLIMIT', value: (_mailbox, _session, state) => state.value }],
  literal: (info, state) =>
    info.command === 'APPEND' && info.size > state.value ? { code: 'TOOBIG', text: tooBig(info.size, state.value) } : undefined,
  checks: {
    append: ({ size }, state) => {
      if (size > state.value) throw new ServiceError('TOOBIG', tooBig(size, state.value));
    },
  },
};
