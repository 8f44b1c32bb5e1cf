/**
 * SMTP replies for refusals. smtp-server sends `err.responseCode` and
 * `err.message` of an error passed to a handler's callback.
 */
import { isServiceError } from '../errors.js';

export interface SmtpReplyError extends Error {
  responseCode: number;
}

export function smtpError(code: number, text: string): SmtpReplyError {
  const err = new Error(text) as SmtpReplyError;
  err.responseCode = code;
  return err;
}

/**
 * A script rule's `send` as a reply: `451 Try again later` (a trailing CRLF
 * is dropped). Text without a 4xx/5xx code (only a function can give one)
 * becomes a 451 with that text, so a rule never makes a refusal look like
 * success.
 */
export function scriptReply(text: string): SmtpReplyError {
  const line = text.replace(/\r?\n$/, '').replace(/[\r\n]+/g, ' ');
  const m = /^([45][0-9][0-9])(?:[ -](.*))?$/.exec(line);
  return m ? smtpError(Number(m[1]), m[2] ?? '') : smtpError(451, line);
}

/**
 * Why the store refused a message, as an SMTP reply. Over quota is 452
 * (RFC 5321 "insufficient system storage", transient: the message fits
 * once the mailbox has room) unless it could never fit, being larger than
 * the whole storage quota: then 552 ("exceeded storage allocation",
 * permanent). Too big for APPENDLIMIT is 552 as well, the code RFC 1870
 * gives for a message over the SIZE limit. Anything else is a transient
 * local error, 451.
 */
export function refusalReply(err: unknown, neverFits: boolean): SmtpReplyError {
  if (isServiceError(err)) {
    if (err.code === 'OVERQUOTA') {
      return neverFits
        ? smtpError(552, `Exceeded storage allocation: the message is larger than the whole quota (${err.message})`)
        : smtpError(452, `Insufficient system storage: ${err.message}`);
    }
    if (err.code === 'TOOBIG') return smtpError(552, `Message exceeds fixed maximum message size: ${err.message}`);
    return smtpError(451, `Requested action aborted: ${err.message}`);
  }
  return smtpError(451, 'Requested action aborted: local error in processing');
}
