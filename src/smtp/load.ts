/**
 * Loads the optional peer package smtp-server, only when SMTP is configured:
 * an IMAP-only user never needs it installed, and nothing is loaded at
 * import time.
 */
import type { SMTPServer } from 'smtp-server';

export type SmtpServerClass = typeof SMTPServer;

/** The one sentence a missing package gets (the command prints it and exits 1). */
export const MISSING_SMTP_SERVER =
  'SMTP intake needs the optional package smtp-server, which is not installed: run `npm install smtp-server` and start again';

/** Resolves with the SMTPServer class, or rejects with MISSING_SMTP_SERVER when the package cannot be found. */
export async function loadSmtpServer(): Promise<SmtpServerClass> {
  try {
    const module = await import('smtp-server');
    return module.SMTPServer;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // Only "not found" becomes the install hint; a broken installation keeps its own error.
    if ((e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') && /smtp-server/.test(e.message)) {
      const missing = new Error(MISSING_SMTP_SERVER);
      (missing as NodeJS.ErrnoException).code = 'ERR_MODULE_NOT_FOUND';
      throw missing;
    }
    throw err;
  }
}
