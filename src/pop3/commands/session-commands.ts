/**
 * Commands of every state: QUIT (RFC 1939 §6), CAPA (RFC 2449 §5), STLS
 * (RFC 2595 §4), UTF8 and LANG (RFC 6856 §2, §3).
 */
import { stlsStripped } from '../../tls/attacks/pop3-attack.js';
import { capabilityLines } from '../capabilities.js';
import { bad, err, linesBody, ok, type Pop3CommandSpec } from './types.js';

export const quit: Pop3CommandSpec = {
  name: 'QUIT',
  states: ['authorization', 'transaction'],
  run({ session, args }) {
    if (args.length > 0) return bad('QUIT takes no argument');
    return session.quit();
  },
};

export const capa: Pop3CommandSpec = {
  name: 'CAPA',
  states: ['authorization', 'transaction'],
  run({ session, args }) {
    if (args.length > 0) return bad('CAPA takes no argument');
    let lines = capabilityLines(session.config, session.state, session.secure, session.state === 'transaction' ? session.user : null, session.certificateUser);
    // starttls-stripping (docs/tls.md): the man in the middle took STLS out.
    if (stlsStripped(session.tlsWatch)) lines = lines.filter((l) => l !== 'STLS');
    session.capaSent(lines);
    return ok('Capability list follows', linesBody(lines));
  },
};

export const stls: Pop3CommandSpec = {
  name: 'STLS',
  states: ['authorization'],
  run({ session, args }) {
    // starttls-stripping: the man in the middle turned the command into one the server does not know.
    if (stlsStripped(session.tlsWatch)) return bad('Unknown command STLS');
    if (args.length > 0) return bad('STLS takes no argument');
    if (!session.config.stls) return err('STLS is not offered on this server');
    if (session.secure) return err('The connection is already secure');
    const plan = session.stlsPlan();
    if (plan && !plan.ok) return err(plan.text);
    session.startTls(plan);
    return ok(plan?.text ?? 'Begin TLS negotiation');
  },
};

export const utf8: Pop3CommandSpec = {
  name: 'UTF8',
  states: ['authorization'],
  run({ session, args }) {
    if (args.length > 0) return bad('UTF8 takes no argument');
    session.utf8 = true;
    return ok('UTF8 enabled');
  },
};

/** The languages LANG lists: English only (the answers are English). */
const LANGUAGES = ['en English'];

export const lang: Pop3CommandSpec = {
  name: 'LANG',
  states: ['authorization', 'transaction'],
  run({ args }) {
    if (args.length === 0) return ok('Language listing follows', linesBody(LANGUAGES));
    if (args.length > 1) return bad('LANG takes one language tag');
    const tag = args[0]!.toLowerCase();
    // RFC 6856 §3: "*" asks the server to pick; a tag it lacks is refused.
    if (tag === '*' || tag === 'en' || tag.startsWith('en-') || tag === 'i-default') return ok('en Language is English');
    return err(`Language ${args[0]} is not available`);
  },
};
