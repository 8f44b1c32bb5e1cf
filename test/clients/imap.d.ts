/** Minimal local types for the parts of `imap` (node-imap 0.8.x) the client tests use. */
declare module 'imap' {
  import { EventEmitter } from 'node:events';
  import type { Readable } from 'node:stream';

  namespace Connection {
    interface Config {
      user: string;
      password?: string;
      /** Base64 XOAUTH2 initial response. */
      xoauth2?: string;
      host: string;
      port: number;
      tls?: boolean;
      autotls?: 'always' | 'required' | 'never';
      authTimeout?: number;
      connTimeout?: number;
      keepalive?: boolean | { interval?: number; idleInterval?: number; forceNoop?: boolean };
      debug?: (info: string) => void;
    }
    interface Box {
      name: string;
      readOnly: boolean;
      uidvalidity: number;
      uidnext: number;
      flags: string[];
      permFlags: string[];
      messages: { total: number; new: number; unseen?: number };
    }
    interface MailBoxes {
      [name: string]: { attribs: string[]; delimiter: string; children: MailBoxes | null };
    }
    interface Address {
      name: string | null;
      mailbox: string;
      host: string;
    }
    interface Envelope {
      date: Date | null;
      subject: string | null;
      from: Address[] | null;
      sender: Address[] | null;
      replyTo: Address[] | null;
      to: Address[] | null;
      cc: Address[] | null;
      bcc: Address[] | null;
      inReplyTo: string | null;
      messageId: string | null;
    }
    interface StructPart {
      partID?: string;
      type: string;
      subtype?: string;
      params: Record<string, string> | null;
      encoding?: string;
      size?: number;
      lines?: number;
    }
    type Struct = Array<StructPart | Struct>;
    interface Attributes {
      uid: number;
      flags: string[];
      date: Date;
      size?: number;
      envelope?: Envelope;
      struct?: Struct;
    }
    interface FetchOptions {
      bodies?: string | string[];
      markSeen?: boolean;
      struct?: boolean;
      envelope?: boolean;
      size?: boolean;
    }
    interface BodyInfo {
      which: string;
      size: number;
      seqno: number;
    }
    interface ImapMessage extends EventEmitter {
      on(event: 'body', listener: (stream: Readable, info: BodyInfo) => void): this;
      on(event: 'attributes', listener: (attrs: Attributes) => void): this;
      on(event: 'end', listener: () => void): this;
    }
    interface ImapFetch extends EventEmitter {
      on(event: 'message', listener: (msg: ImapMessage, seqno: number) => void): this;
      on(event: 'error', listener: (err: Error) => void): this;
      on(event: 'end', listener: () => void): this;
      once(event: 'error', listener: (err: Error) => void): this;
      once(event: 'end', listener: () => void): this;
    }
    type Callback<T = void> = (err: Error | null, result: T) => void;
    interface SeqOps {
      fetch(source: string | number | Array<string | number>, options: FetchOptions): ImapFetch;
      search(criteria: unknown[], cb: Callback<number[]>): void;
      addFlags(source: string | number | number[], flags: string | string[], cb: Callback): void;
    }
  }

  class Connection extends EventEmitter {
    constructor(config: Connection.Config);
    state: string;
    seq: Connection.SeqOps;
    connect(): void;
    end(): void;
    destroy(): void;
    serverSupports(capability: string): boolean;
    getBoxes(cb: Connection.Callback<Connection.MailBoxes>): void;
    addBox(name: string, cb: Connection.Callback): void;
    openBox(name: string, readOnly: boolean, cb: Connection.Callback<Connection.Box>): void;
    status(name: string, cb: Connection.Callback<Connection.Box>): void;
    append(
      data: string | Buffer,
      options: { mailbox?: string; flags?: string[]; date?: Date },
      cb: (err: Error | null, uid?: number) => void,
    ): void;
    fetch(source: string | number | Array<string | number>, options: Connection.FetchOptions): Connection.ImapFetch;
    search(criteria: unknown[], cb: Connection.Callback<number[]>): void;
    addFlags(source: string | number | number[], flags: string | string[], cb: Connection.Callback): void;
    delFlags(source: string | number | number[], flags: string | string[], cb: Connection.Callback): void;
    copy(source: string | number | number[], mailbox: string, cb: (err: Error | null, destUids?: string) => void): void;
    move(source: string | number | number[], mailbox: string, cb: (err: Error | null, destUids?: string) => void): void;
    expunge(cb: Connection.Callback): void;
    expunge(source: string | number | number[], cb: Connection.Callback): void;
    static parseHeader(raw: string): Record<string, string[]>;
  }

  export = Connection;
}
