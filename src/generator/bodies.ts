/**
 * Body shapes of the realistic profile, as mail programs write them:
 * RFC 2045-2049 MIME (alternative, related with inline images by Content-ID,
 * mixed with attachments, message/rfc822), RFC 5545 / RFC 6047 invitations
 * (text/calendar; method=REQUEST), and the MIME structure only of RFC 1847 /
 * RFC 3156 (PGP/MIME) and RFC 8551 (S/MIME) signed and encrypted mail: the
 * signature and ciphertext are noise of the right shape, not cryptography.
 *
 * Each shape writes its Content-* header lines and its body into the
 * message's Bytes, and marks the hole where filler text goes.
 */
import { Bytes, words } from './bytes.js';
import { formatDate } from './headers.js';
import type { BodyKind, ResolvedOptions } from './options.js';
import { Rng } from './random.js';

export interface BodyContext {
  opts: ResolvedOptions;
  rng: Rng;
  /** Unique within the message: boundaries and Content-IDs. */
  next(): number;
  /** A token unique to this message (its index and seed) for boundaries and ids. */
  tag: string;
  /** Sent time of the message (ms), for calendar events. */
  ms: number;
  /** From and To address specs, for the calendar's ORGANIZER/ATTENDEE. */
  from: string;
  to: string;
  /** The whole message's size target: the encrypted shape sizes its ciphertext from it. */
  target: number;
}

function boundary(c: BodyContext): string {
  // Boundaries as mail programs make them: a prefix, the message's token, a counter (RFC 2046 §5.1.1: up to 70 characters).
  return `${c.rng.pick(['----=_Part_', '=_rk', '------------', 'b1_'])}${c.tag}_${c.next()}`;
}

function textBody(c: BodyContext, b: Bytes): void {
  b.line(c.rng.pick(['Hi,', 'Hello all,', 'Dear team,', 'Hey', 'Good morning,']));
  b.line('');
  b.line(`${words(c.rng, c.rng.int(6, 12))}.`);
  b.hole();
  b.line('');
  b.line(c.rng.pick(['Thanks', 'Regards', 'Cheers', 'Best']));
}

/** `sevenBit`: the part is signed, and RFC 3156 §3 wants signed data in 7bit (or quoted-printable). */
function plainPart(c: BodyContext, b: Bytes, sevenBit = false): void {
  const qp = c.rng.chance(0.2);
  b.line(`Content-Type: text/plain; charset=${qp ? 'utf-8' : c.rng.pick(['us-ascii', 'utf-8', 'UTF-8', '"utf-8"; format=flowed'])}`);
  b.line(`Content-Transfer-Encoding: ${qp ? 'quoted-printable' : sevenBit ? '7bit' : c.rng.pick(['7bit', '7bit', '8bit'])}`);
  b.line('');
  if (qp) b.line('Gr=C3=BC=C3=9Fe aus K=C3=B6ln, caf=C3=A9 at 10?');
  textBody(c, b);
}

function htmlPart(c: BodyContext, b: Bytes, image: string | null): void {
  b.line('Content-Type: text/html; charset=utf-8');
  b.line('Content-Transfer-Encoding: 7bit');
  b.line('');
  b.line('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>');
  b.line(`<p>${words(c.rng, c.rng.int(6, 14))}</p>`);
  if (image) b.line(`<p><img src="cid:${image}" alt="logo" width="64" height="64"></p>`);
  b.line('<pre>');
  b.hole();
  b.line('</pre><p><b>Thanks</b></p></body></html>');
}

const IMAGE_TYPES = [
  ['image/png', 'png'],
  ['image/jpeg', 'jpg'],
  ['image/gif', 'gif'],
] as const;
const ATTACHMENT_TYPES = [
  ['application/pdf', 'report', 'pdf'],
  ['application/octet-stream', 'data', 'bin'],
  ['application/zip', 'archive', 'zip'],
  ['text/csv', 'figures', 'csv'],
  ['image/jpeg', 'photo', 'jpg'],
  ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'minutes', 'docx'],
] as const;

/** A base64 leaf with its type, name and disposition. */
function binaryPart(c: BodyContext, b: Bytes, type: string, name: string, disposition: 'inline' | 'attachment', cid: string | null): void {
  const size = c.rng.size(c.opts.attachmentSize);
  // Names as senders write them: plain, RFC 2231 (filename*=), or an RFC 2047 word (wrong, but common).
  const style = c.rng.below(6);
  if (style === 0) {
    b.line(`Content-Type: ${type}; name="=?utf-8?B?${Buffer.from(`Übersicht ${name}`).toString('base64')}?="`);
    b.line(`Content-Disposition: ${disposition}; filename="=?utf-8?B?${Buffer.from(`Übersicht ${name}`).toString('base64')}?="`);
  } else if (style === 1) {
    b.line(`Content-Type: ${type}; name="${name}"`);
    b.line(`Content-Disposition: ${disposition};\r\n filename*=utf-8''%C3%9Cbersicht%20${encodeURIComponent(name)}`);
  } else {
    b.line(`Content-Type: ${type}; name="${name}"`);
    b.line(`Content-Disposition: ${disposition}; filename="${name}"; size=${size}`);
  }
  if (cid) b.line(`Content-ID: <${cid}>`);
  b.line('Content-Transfer-Encoding: base64');
  b.line('');
  b.base64(c.rng.bytes(size));
}

function multipart(c: BodyContext, b: Bytes, subtype: string, params: string, parts: ((b: Bytes) => void)[]): void {
  const bound = boundary(c);
  b.line(`Content-Type: multipart/${subtype};${params}\r\n boundary="${bound}"`);
  b.line('');
  if (c.rng.chance(0.5)) b.line('This is a multi-part message in MIME format.');
  for (const part of parts) {
    b.line(`--${bound}`);
    part(b);
    b.line('');
  }
  b.line(`--${bound}--`);
}

function related(c: BodyContext, b: Bytes): void {
  const cid = `img${c.next()}.${c.tag}@generator.rookery.invalid`;
  const [type, ext] = c.rng.pick(IMAGE_TYPES);
  multipart(c, b, 'related', ' type="text/html";', [(b) => htmlPart(c, b, cid), (b) => binaryPart(c, b, type, `logo.${ext}`, 'inline', cid)]);
}

function foldIcal(line: string): string {
  // RFC 5545 §3.1: lines longer than 75 octets are folded with CRLF and one space.
  if (line.length <= 75) return line;
  let out = line.slice(0, 75);
  for (let i = 75; i < line.length; i += 74) out += `\r\n ${line.slice(i, i + 74)}`;
  return out;
}

function icalTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

function calendarPart(c: BodyContext, b: Bytes, method: 'REQUEST' | 'CANCEL'): void {
  b.line(`Content-Type: text/calendar; charset=utf-8; method=${method}`);
  b.line('Content-Transfer-Encoding: 7bit');
  b.line('');
  const start = c.ms + c.rng.int(1, 30) * 86_400_000;
  const lines = [
    'BEGIN:VCALENDAR',
    'PRODID:-//Rookery//Generator//EN',
    'VERSION:2.0',
    `METHOD:${method}`,
    'BEGIN:VEVENT',
    `UID:${c.tag}-${c.next()}@generator.rookery.invalid`,
    `DTSTAMP:${icalTime(c.ms)}`,
    `DTSTART:${icalTime(start)}`,
    `DTEND:${icalTime(start + c.rng.pick([30, 60, 90]) * 60_000)}`,
    `SUMMARY:${words(c.rng, c.rng.int(2, 6))}`,
    `DESCRIPTION:${words(c.rng, c.rng.int(10, 30))}`,
    `ORGANIZER;CN=Organizer:mailto:${c.from}`,
    `ATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:${c.to}`,
    `SEQUENCE:${method === 'CANCEL' ? 1 : 0}`,
    `STATUS:${method === 'CANCEL' ? 'CANCELLED' : 'CONFIRMED'}`,
    'END:VEVENT',
    'END:VCALENDAR',
  ];
  for (const l of lines) b.line(foldIcal(l));
}

function armor(c: BodyContext, b: Bytes, kind: 'SIGNATURE' | 'MESSAGE', size: number): void {
  b.line(`-----BEGIN PGP ${kind}-----`);
  b.line('');
  b.base64(c.rng.bytes(size));
  b.line(`=${c.rng.bytes(3).toString('base64')}`);
  b.line(`-----END PGP ${kind}-----`);
}

function signed(c: BodyContext, b: Bytes): void {
  if (c.rng.chance(0.5)) {
    // RFC 3156 §5: the signature covers the first part's bytes exactly, so it is 7bit (§3).
    multipart(c, b, 'signed', ' micalg=pgp-sha256;\r\n protocol="application/pgp-signature";', [
      (b) => plainPart(c, b, true),
      (b) => {
        b.line('Content-Type: application/pgp-signature; name="signature.asc"');
        b.line('Content-Description: OpenPGP digital signature');
        b.line('Content-Disposition: attachment; filename="signature.asc"');
        b.line('');
        armor(c, b, 'SIGNATURE', 119);
      },
    ]);
    return;
  }
  // RFC 8551 §3.5.3: multipart/signed with an application/pkcs7-signature part.
  multipart(c, b, 'signed', ' protocol="application/pkcs7-signature";\r\n micalg=sha-256;', [
    (b) => plainPart(c, b, true),
    (b) => {
      b.line('Content-Type: application/pkcs7-signature; name="smime.p7s"');
      b.line('Content-Transfer-Encoding: base64');
      b.line('Content-Disposition: attachment; filename="smime.p7s"');
      b.line('Content-Description: S/MIME Cryptographic Signature');
      b.line('');
      b.base64(c.rng.bytes(c.rng.int(1500, 4000)));
    },
  ]);
}

function encrypted(c: BodyContext, b: Bytes): void {
  const payload = Math.max(64, Math.floor((c.target - 900) * 0.74));
  if (c.rng.chance(0.5)) {
    // RFC 3156 §4: a version part, then the ciphertext.
    const bound = boundary(c);
    b.line(`Content-Type: multipart/encrypted;\r\n protocol="application/pgp-encrypted";\r\n boundary="${bound}"`);
    b.line('');
    b.line('This is an OpenPGP/MIME encrypted message (RFC 4880 and 3156)');
    b.line(`--${bound}`);
    b.line('Content-Type: application/pgp-encrypted');
    b.line('Content-Description: PGP/MIME version identification');
    b.line('');
    b.line('Version: 1');
    b.line('');
    b.line(`--${bound}`);
    b.line('Content-Type: application/octet-stream; name="encrypted.asc"');
    b.line('Content-Description: OpenPGP encrypted message');
    b.line('Content-Disposition: inline; filename="encrypted.asc"');
    b.line('');
    armor(c, b, 'MESSAGE', payload);
    b.line('');
    b.line(`--${bound}--`);
    return;
  }
  // RFC 8551 §3.3: a single application/pkcs7-mime part.
  b.line('Content-Type: application/pkcs7-mime; smime-type=enveloped-data;\r\n name="smime.p7m"');
  b.line('Content-Transfer-Encoding: base64');
  b.line('Content-Disposition: attachment; filename="smime.p7m"');
  b.line('Content-Description: S/MIME Encrypted Message');
  b.line('');
  b.base64(c.rng.bytes(payload));
}

/** A short forwarded message for message/rfc822 parts. */
function innerMessage(c: BodyContext, b: Bytes): void {
  b.line(`From: ${c.to}`);
  b.line(`To: ${c.from}`);
  b.line(`Subject: ${words(c.rng, c.rng.int(2, 5))}`);
  b.line(`Date: ${formatDate(c.ms - c.rng.int(1, 100) * 3_600_000, 0, null, true)}`);
  b.line(`Message-ID: <inner.${c.tag}.${c.next()}@generator.rookery.invalid>`);
  b.line('MIME-Version: 1.0');
  b.line('Content-Type: text/plain; charset=us-ascii');
  b.line('');
  b.line(words(c.rng, c.rng.int(10, 40)));
}

/** Writes the body of shape `kind`: its Content-* lines, the blank line, the body. */
export function writeBody(c: BodyContext, b: Bytes, kind: BodyKind): void {
  switch (kind) {
    case 'plain':
      plainPart(c, b);
      return;
    case 'html':
      htmlPart(c, b, null);
      return;
    case 'alternative':
      multipart(c, b, 'alternative', '', [(b) => plainPart(c, b), (b) => htmlPart(c, b, null)]);
      return;
    case 'related':
      if (c.rng.chance(0.5)) multipart(c, b, 'alternative', '', [(b) => plainPart(c, b), (b) => related(c, b)]);
      else related(c, b);
      return;
    case 'attachment': {
      const n = c.rng.int(1, 3);
      const parts: ((b: Bytes) => void)[] = [(b) => (c.rng.chance(0.3) ? multipart(c, b, 'alternative', '', [(b) => plainPart(c, b), (b) => htmlPart(c, b, null)]) : plainPart(c, b))];
      for (let i = 0; i < n; i++) {
        const [type, base, ext] = c.rng.pick(ATTACHMENT_TYPES);
        parts.push((b) => binaryPart(c, b, type, `${base}-${i + 1}.${ext}`, 'attachment', null));
      }
      multipart(c, b, 'mixed', '', parts);
      return;
    }
    case 'rfc822':
      multipart(c, b, 'mixed', '', [
        (b) => plainPart(c, b),
        (b) => {
          b.line('Content-Type: message/rfc822');
          b.line(`Content-Disposition: ${c.rng.pick(['inline', 'attachment; filename="forwarded.eml"'])}`);
          b.line('');
          innerMessage(c, b);
        },
      ]);
      return;
    case 'calendar': {
      const method = c.rng.chance(0.85) ? 'REQUEST' : 'CANCEL';
      // RFC 6047 §2.4: a text/calendar part, usually beside a text/plain one for readers without a calendar.
      multipart(c, b, 'alternative', '', [(b) => plainPart(c, b), (b) => calendarPart(c, b, method)]);
      return;
    }
    case 'signed':
      signed(c, b);
      return;
    case 'encrypted':
      encrypted(c, b);
      return;
  }
}
