/** The `transcript` option: per-session transcripts (src/transcript/, docs/debugging.md). */
import type { TranscriptSettings } from '../transcript/transcripts.js';
import { checkTypos, isPlainObject, type Problems } from './problems.js';

export const TRANSCRIPT_KEYS = ['enabled', 'maxBytes', 'maxTotalBytes', 'keepClosed', 'dir', 'redact'] as const;
const TRANSCRIPT_SET = new Set<string>(TRANSCRIPT_KEYS);

/** What a caller may pass as `transcript`. */
export interface TranscriptOptions {
  /** Record sessions. Default true (bench imap: see docs/debugging.md for the cost). */
  enabled?: boolean;
  /** Bytes kept per session, both directions together; the oldest go first. Default 256 KiB. */
  maxBytes?: number;
  /**
   * Bytes all live sessions' transcripts keep together. Past it, the session
   * that is recording loses its oldest bytes (a flood of connections cannot
   * make transcripts grow without bound). Default 64 MiB.
   */
  maxTotalBytes?: number;
  /** Closed sessions whose transcripts stay readable (the most recent ones). Default 32. */
  keepClosed?: number;
  /** Write each session's transcript to `<dir>/rookery-<imap port>-session-<n>.txt` when it closes. Default none. */
  dir?: string;
  /** Replace credentials (LOGIN password, AUTHENTICATE data) with `***`. Default true. */
  redact?: boolean;
}

export const TRANSCRIPT_DEFAULTS: TranscriptSettings = {
  enabled: true,
  maxBytes: 256 * 1024,
  maxTotalBytes: 64 * 1024 * 1024,
  keepClosed: 32,
  dir: null,
  redact: true,
};

/** `transcript`: a boolean (on/off with defaults) or an object of TranscriptOptions. */
export function resolveTranscript(problems: Problems, value: unknown): TranscriptSettings {
  const fallback = { ...TRANSCRIPT_DEFAULTS };
  if (value === undefined) return fallback;
  if (typeof value === 'boolean') return { ...fallback, enabled: value };
  if (!isPlainObject(value)) {
    problems.expected('transcript', 'a boolean or an object ({enabled, maxBytes, maxTotalBytes, keepClosed, dir, redact})', value);
    return fallback;
  }
  checkTypos(value, TRANSCRIPT_SET, TRANSCRIPT_KEYS, 'transcript', problems);
  const out = { ...fallback };
  const int = (key: 'maxBytes' | 'maxTotalBytes' | 'keepClosed', min: number): void => {
    const v = value[key];
    if (v === undefined) return;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= min) out[key] = v;
    else problems.expected(`transcript.${key}`, min === 0 ? 'a non-negative integer' : 'a positive integer', v);
  };
  const bool = (key: 'enabled' | 'redact'): void => {
    const v = value[key];
    if (v === undefined) return;
    if (typeof v === 'boolean') out[key] = v;
    else problems.expected(`transcript.${key}`, 'a boolean', v);
  };
  bool('enabled');
  bool('redact');
  int('maxBytes', 1);
  int('maxTotalBytes', 1);
  int('keepClosed', 0);
  if (value.dir !== undefined) {
    if (typeof value.dir === 'string' && value.dir !== '') out.dir = value.dir;
    else problems.expected('transcript.dir', 'a directory path (a non-empty string)', value.dir);
  }
  return out;
}
