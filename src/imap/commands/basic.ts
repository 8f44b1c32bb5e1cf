/** CAPABILITY, NOOP, CHECK, LOGOUT: commands without arguments. */
import { ANY_STATE, SELECTED, ok, type CommandSpec } from '../command.js';
import { atom } from '../wire/values.js';

export const capability: CommandSpec = {
  name: 'CAPABILITY',
  states: ANY_STATE,
  run({ session, args }) {
    args.end();
    session.untagged(atom('CAPABILITY'), ...session.announceCapabilities().map(atom));
    return ok('Capability completed');
  },
};

export const noop: CommandSpec = {
  name: 'NOOP',
  states: ANY_STATE,
  run({ args }) {
    args.end();
    return ok('NOOP completed');
  },
};

export const check: CommandSpec = {
  name: 'CHECK',
  states: SELECTED,
  run({ args }) {
    args.end();
    return ok('Check completed');
  },
};

export const logout: CommandSpec = {
  name: 'LOGOUT',
  states: ANY_STATE,
  run({ session, args }) {
    args.end();
    session.untagged(atom('BYE'), atom('Logging out'));
    session.logout();
    return ok('Logout completed');
  },
};
