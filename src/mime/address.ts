/**
 * RFC 5322 address lists as IMAP ENVELOPE address structures, parsed the
 * way Dovecot parses them (message-address.c semantics):
 *
 * - display names are phrases: words joined by one space, quoted strings
 *   unquoted; RFC 2047 encoded words are NOT decoded;
 * - `addr-spec (Comment)` takes the comment as the name;
 * - groups give `(NIL NIL "group" NIL)` ... `(NIL NIL NIL NIL)`;
 * - a missing local part / domain becomes "MISSING_MAILBOX" /
 *   "MISSING_DOMAIN", a broken `<...>` gets the domain "SYNTAX_ERROR", and
 *   a broken route "INVALID_ROUTE" — e.g. `To: John Smith` gives
 *   `((NIL NIL "John" "MISSING_DOMAIN"))`;
 * - an empty value (or only comments) is no address list at all (NIL).
 */
import { Bytes, Reader, type Step } from './reader.js';

/** One ENVELOPE address: name, route (adl), mailbox, host. */
export interface Address {
  name: Buffer | null;
  route: Buffer | string | null;
  mailbox: Buffer | string | null;
  domain: Buffer | string | null;
}

const LT = 60;
const GT = 62;
const AT = 64;
const COLON = 58;
const SEMI = 59;
const COMMA = 44;
const DQUOTE = 34;

class AddressParser {
  readonly out: Address[] = [];
  private addr: Address = { name: null, route: null, mailbox: null, domain: null };

  constructor(private readonly r: Reader) {}

  private emit(): void {
    this.out.push(this.addr);
    this.addr = { name: null, route: null, mailbox: null, domain: null };
  }

  private emitFixed(): void {
    if (this.addr.mailbox === null) this.addr.mailbox = 'MISSING_MAILBOX';
    if (this.addr.domain === null) this.addr.domain = 'MISSING_DOMAIN';
    this.emit();
  }

  private localPart(): Step {
    const r = this.r;
    const s = new Bytes();
    const step = r.cur() === DQUOTE ? r.parseQuotedString(s) : r.parseDotAtom(s);
    if (step < 0) return -1;
    this.addr.mailbox = s.toBuffer();
    return step;
  }

  private domain(): Step {
    const s = new Bytes();
    const step = this.r.parseDomain(s);
    if (step < 0) return -1;
    this.addr.domain = s.toBuffer();
    return step;
  }

  /** obs-route: `@a,@b` up to (not including) the ':'. */
  private route(): Step {
    const r = this.r;
    const s = new Bytes();
    for (;;) {
      if (!r.more()) return 0;
      if (r.cur() !== AT) break;
      if (s.length > 0) s.push(COMMA);
      s.push(AT);
      const step = r.parseDomain(s);
      if (step <= 0) return step;
      while (r.skipCfws() > 0 && r.cur() === COMMA) r.pos++;
    }
    this.addr.route = s.toBuffer();
    return 1;
  }

  private angleAddr(): Step {
    const r = this.r;
    r.pos++; // '<'
    let step = r.skipCfws();
    if (step <= 0) return step;
    if (r.cur() === AT) {
      if (this.route() <= 0 || r.cur() !== COLON) {
        this.addr.route = 'INVALID_ROUTE';
        return -1;
      }
      r.pos++;
      step = r.skipCfws();
      if (step <= 0) return step;
    }
    step = this.localPart();
    if (step <= 0) return step;
    if (r.cur() === AT) {
      step = this.domain();
      if (step <= 0) return step;
    }
    if (r.cur() !== GT) return -1;
    r.pos++;
    return r.skipCfws();
  }

  private nameAddr(): Step {
    const r = this.r;
    const phrase = new Bytes();
    if (r.parsePhrase(phrase) <= 0 || r.cur() !== LT) return -1;
    this.addr.name = phrase.length > 0 ? phrase.toBuffer() : null;
    if (this.angleAddr() < 0) this.addr.domain = 'SYNTAX_ERROR';
    return r.more() ? 1 : 0;
  }

  private addrSpec(): Step {
    const r = this.r;
    r.lastComment = null;
    let step = this.localPart();
    if (step !== 0 && r.cur() === AT) {
      const s2 = this.domain();
      if (s2 <= 0) step = s2;
    }
    const comment = r.lastComment as Buffer | null;
    if (comment !== null && comment.length > 0) this.addr.name = comment;
    return step;
  }

  mailbox(): Step {
    const r = this.r;
    const start = r.pos;
    let step = this.nameAddr();
    if (step < 0) {
      r.pos = start;
      this.addr = { name: null, route: null, mailbox: null, domain: null };
      step = this.addrSpec();
    }
    this.emitFixed();
    return step;
  }

  private group(): Step {
    const r = this.r;
    const phrase = new Bytes();
    if (r.parsePhrase(phrase) <= 0 || r.cur() !== COLON) return -1;
    // from here on it is a group, whatever follows
    r.pos++;
    let step: Step = r.skipCfws();
    this.addr.mailbox = phrase.toBuffer();
    this.emit();
    if (step > 0 && r.cur() !== SEMI) {
      for (;;) {
        if (this.mailbox() <= 0) {
          step = -1;
          break;
        }
        if (r.cur() !== COMMA) break;
        r.pos++;
        if (r.skipCfws() <= 0) {
          step = -1;
          break;
        }
      }
    }
    if (step >= 0) {
      if (r.cur() !== SEMI) {
        step = -1;
      } else {
        r.pos++;
        step = r.skipCfws();
      }
    }
    this.emit(); // end of group: all NIL
    return step === 0 ? 0 : 1;
  }

  address(): Step {
    const r = this.r;
    const start = r.pos;
    const mark = this.out.length;
    const step = this.group();
    if (step >= 0) return step;
    r.pos = start;
    this.out.length = mark;
    this.addr = { name: null, route: null, mailbox: null, domain: null };
    return this.mailbox();
  }

  list(): void {
    const r = this.r;
    for (;;) {
      if (this.address() === 0) break;
      if (r.cur() !== COMMA) break;
      r.pos++;
      const step = r.skipCfws();
      if (step <= 0) {
        if (step < 0) this.emitFixed(); // ends with garbage
        break;
      }
    }
  }
}

/**
 * Parses an address-list header value (the raw, possibly folded bytes).
 * @returns the addresses (group markers included), or null when the value holds none
 */
export function parseAddressList(value: Buffer): Address[] | null {
  const r = new Reader(value);
  if (r.skipCfws() <= 0) return null;
  const p = new AddressParser(r);
  p.list();
  return p.out.length > 0 ? p.out : null;
}
