/**
 * What `server.transcript(n)` returns: one session's traffic as it crossed
 * the socket boundary, with its JSON form (GET /v1/sessions/{n}/transcript)
 * and its text form (docs/debugging.md describes it; `text/plain` there).
 */
import { isUtf8 } from 'node:buffer';
import type { TranscriptChunk, TranscriptSide } from './ring.js';
import { renderTranscript } from './text.js';

export type { TranscriptChunk, TranscriptSide } from './ring.js';

/** A chunk in JSON: its bytes as UTF-8 text when they are valid UTF-8, else base64. */
export interface TranscriptChunkJson {
  at: number;
  from: TranscriptSide;
  data: string;
  encoding: 'utf-8' | 'base64';
}

export interface TranscriptJson {
  session: number;
  user: string | null;
  remoteAddress: string | null;
  /** False once the session has closed. */
  open: boolean;
  /** Server-clock times, epoch milliseconds. */
  openedAt: number;
  closedAt: number | null;
  /** Oldest bytes no longer kept (the ring's `maxBytes`). */
  droppedBytes: number;
  /** True when credentials were replaced with `***`. */
  redacted: boolean;
  chunks: TranscriptChunkJson[];
}

export interface TranscriptInit {
  session: number;
  user: string | null;
  remoteAddress: string | null;
  openedAt: number;
  closedAt: number | null;
  droppedBytes: number;
  redacted: boolean;
  chunks: readonly TranscriptChunk[];
}

export class Transcript {
  readonly session: number;
  readonly user: string | null;
  readonly remoteAddress: string | null;
  readonly openedAt: number;
  readonly closedAt: number | null;
  readonly droppedBytes: number;
  readonly redacted: boolean;
  /** Chunks oldest first, as they crossed the socket (after decompression, inside TLS). */
  readonly chunks: readonly TranscriptChunk[];

  constructor(init: TranscriptInit) {
    this.session = init.session;
    this.user = init.user;
    this.remoteAddress = init.remoteAddress;
    this.openedAt = init.openedAt;
    this.closedAt = init.closedAt;
    this.droppedBytes = init.droppedBytes;
    this.redacted = init.redacted;
    this.chunks = init.chunks;
  }

  get open(): boolean {
    return this.closedAt === null;
  }

  /** Every byte one side sent, in order (both sides interleaved without `from`). */
  bytes(from?: TranscriptSide): Buffer {
    return Buffer.concat(this.chunks.filter((c) => from === undefined || c.from === from).map((c) => c.data));
  }

  /** The text form: one line per protocol line, pasteable into a bug report and readable by `rookery replay`. */
  text(): string {
    return renderTranscript(this);
  }

  toJSON(): TranscriptJson {
    return {
      session: this.session,
      user: this.user,
      remoteAddress: this.remoteAddress,
      open: this.open,
      openedAt: this.openedAt,
      closedAt: this.closedAt,
      droppedBytes: this.droppedBytes,
      redacted: this.redacted,
      chunks: this.chunks.map((c) =>
        isUtf8(c.data)
          ? { at: c.at, from: c.from, data: c.data.toString('utf8'), encoding: 'utf-8' as const }
          : { at: c.at, from: c.from, data: c.data.toString('base64'), encoding: 'base64' as const },
      ),
    };
  }
}
