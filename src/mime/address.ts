/**
 * RFC 5322 address lists as IMAP ENVELOPE address structures, parsed the
 * way Dovecot parses them (message-address.c semantics):
 *
 * - display names are phrases: words joined by one space, quoted strings
 *   unquoted; RFC 2047 encoded words are NOT decoded;
 * - `addr-spec (Comment)` takes the comment as the name;
 * - groups give `(NIL NIL "group" NIL)` ... `(NIL NIL NIL NIL)`;
 * - a missing (or empty) local part / domain becomes "MISSING_MAILBOX" /
 *   "MISSING_DOMAIN" (`<>` and `@` give both), a broken `<...>` (an
 *   unclosed `<alice@example.com` too) gets the domain "SYNTAX_ERROR", and
 *   a broken route "INVALID_ROUTE";
 * - words without `@domain` are a display name: `To: John Smith` gives
 *   `(("John Smith" NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))`, a lone
 *   `To: john` gives `((NIL NIL "john" "MISSING_DOMAIN"))`;
 * - a local part may hold stray dots (`a..b@x`, `a.@x`), as mailers send;
 * - a broken mailbox inside a group does not end the group;
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
const DOT = 46;

/** Most addresses read from one header value (Dovecot's limit). */
const MAX_ADDRESSES = 10000;

class AddressParser {
  readonly out: Address[] = [];
  private addr: Address = { name: null, route: null, mailbox: null, domain: null };
  /** Text of the last local part read (an addr-spec without domain may turn into a name). */
  private local = new Bytes();
  /** Whether the addr-spec just read lacked a usable local part or domain. */
  private invalid = false;

  constructor(private readonly r: Reader) {}

  private emit(): void {
    this.out.push(this.addr);
    this.addr = { name: null, route: null, mailbox: null, domain: null };
  }

  /** Emits the address with MISSING_MAILBOX / MISSING_DOMAIN where a part is missing (or the domain empty). */
  private emitFixed(): void {
    if (this.addr.mailbox === null) this.addr.mailbox = 'MISSING_MAILBOX';
    const d = this.addr.domain;
    if (d === null || d.length === 0) this.addr.domain = 'MISSING_DOMAIN';
    this.emit();
  }

  /**
   * local-part: a quoted string, or atoms and dots in any order (dots may
   * lead, trail or repeat, as mailers write them; Dovecot's non-strict dots).
   */
  private localPart(): Step {
    const r = this.r;
    const s = new Bytes();
    this.local = s;
    let step: Step;
    if (r.cur() === DQUOTE) {
      step = r.parseQuotedString(s);
    } else {
      step = -1;
      do {
        let end = false;
        while (r.cur() === DOT) {
          s.push(DOT);
          r.pos++;
          if (!r.more()) {
            end = true;
            break;
          }
          step = 1;
        }
        if (end) {
          step = 0;
          break;
        }
        if (r.cur() === AT) break;
        step = r.parseAtom(s);
      } while (step > 0 && r.cur() === DOT);
    }
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

  /** `<` [route `:`] [local-part [`@` domain]] `>`; any failure is -1 (the caller marks SYNTAX_ERROR). */
  private angleAddr(): Step {
    const r = this.r;
    r.pos++; // '<'
    if (r.skipCfws() <= 0) return -1;
    if (r.cur() === AT) {
      if (this.route() > 0 && r.cur() === COLON) {
        r.pos++;
      } else {
        this.addr.route = 'INVALID_ROUTE';
        if (!r.more()) return -1;
        // go on with what follows
      }
      if (r.skipCfws() <= 0) return -1;
    }
    if (r.cur() !== GT) {
      // `<>` has neither part: both are reported missing
      if (this.localPart() <= 0) return -1;
      if (r.cur() === AT && this.domain() <= 0) return -1;
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

  /**
   * addr-spec. Without `@domain`, a lone word is a mailbox with a missing
   * domain, but words followed by more words are a display name
   * (`To: John Smith` → name "John Smith").
   */
  private addrSpec(): Step {
    const r = this.r;
    r.lastComment = null;
    const quoted = r.cur() === DQUOTE;
    let step = this.localPart();
    this.invalid = step <= 0;
    let domainStep: Step | null = null;
    if (step !== 0 && r.cur() === AT) {
      domainStep = this.domain();
      if (domainStep <= 0) step = domainStep;
    }
    const comment = r.lastComment as Buffer | null;
    if (comment !== null && comment.length > 0) {
      this.addr.name = comment;
    } else if (domainStep === null) {
      const words = new Bytes();
      r.parsePhrase(words);
      if (words.length > 0) {
        const name = Buffer.concat([this.local.toBuffer(), Buffer.from(' '), words.toBuffer()]);
        this.addr.mailbox = null;
        this.addr.name = name;
      } else if (!quoted) {
        this.addr.domain = '';
      }
      this.invalid = true;
      return -1;
    }
    return step;
  }

  mailbox(): Step {
    const r = this.r;
    const start = r.pos;
    let step = this.nameAddr();
    if (step < 0) {
      r.pos = start;
      this.addr = { name: null, route: null, mailbox: null, domain: null };
      this.local = new Bytes();
      step = this.addrSpec();
      // a quoted string alone is a name, not a mailbox
      if (this.invalid && this.addr.name === null && this.addr.mailbox !== null && this.addr.domain === null) {
        this.addr.name = this.addr.mailbox as Buffer;
        this.addr.mailbox = null;
      }
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
        this.mailbox(); // a broken mailbox does not end the group
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
    for (let n = 0; n < MAX_ADDRESSES; n++) {
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
