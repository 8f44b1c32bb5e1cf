/**
 * What `rookery record --protocol pop3` changes in the traffic it proxies
 * so that the recording stays readable: STLS (RFC 2595 section 4) is taken
 * out of CAPA answers and refused by the proxy itself. Everything else
 * passes by whole lines.
 */

/** `-ERR` for a client line that would start TLS (STLS), else null. */
export function refusePop3Layer(line: Buffer): Buffer | null {
  if (!/^STLS\s*$/i.test(line.subarray(0, 16).toString('latin1'))) return null;
  return Buffer.from('-ERR STLS is off while rookery record records this connection\r\n', 'latin1');
}

/**
 * Drops the `STLS` line of CAPA answers. A CAPA answer is the multi-line
 * response to a CAPA command; POP3 answers commands in order, so the
 * answer to a CAPA is the next response that starts after it.
 */
export class CapaFilter {
  /** CAPA commands sent whose answer has not started. */
  private capaWaiting = 0;
  /** Inside a CAPA answer: only there is a line `STLS` an offer (a message body may hold one too). */
  private inCapa = false;

  fromClient(line: Buffer): void {
    if (/^CAPA\s*$/i.test(line.subarray(0, 16).toString('latin1'))) this.capaWaiting++;
  }

  /** The server line to pass on, or null to drop it. */
  fromServer(line: Buffer): Buffer | null {
    const text = line.subarray(0, 16).toString('latin1');
    if (this.inCapa) {
      if (/^\.\r?\n$/.test(text)) this.inCapa = false;
      else if (/^STLS\s*$/i.test(text)) return null;
      return line;
    }
    if (this.capaWaiting > 0 && /^[+-]/.test(text)) {
      this.capaWaiting--;
      this.inCapa = text.startsWith('+OK');
    }
    return line;
  }
}
