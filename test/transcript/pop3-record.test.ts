/**
 * `rookery record --protocol pop3` in front of a throwaway Dovecot POP3:
 * poplib's session is recorded through the proxy (PASS redacted, STLS not
 * offered), then `rookery replay <file> --pop3-port 0` serves it to poplib
 * again with the same answers. Skipped where Dovecot's POP3 is missing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startDovecotPop3 } from '../dovecot/pop3.js';
import { mail } from '../helpers/server.js';
import { CLI, exited, startCli } from '../helpers/cli.js';
import { startRecorder } from '../../src/transcript/record.js';
import { python, startPop3, WireClient } from '../pop3/pop3-test.js';

const SESSION = (port: number, password: string): string => `import poplib, json
p = poplib.POP3('127.0.0.1', ${port}, timeout=10)
out = {'welcome': p.getwelcome().decode()}
out['capa'] = sorted(p.capa().keys())
p.user('alice'); p.pass_('${password}')
out['stat'] = p.stat()
out['list'] = [l.decode() for l in p.list()[1]]
out['retr'] = [l.decode() for l in p.retr(2)[1]]
out['uidl'] = [l.decode() for l in p.uidl()[1]]
out['quit'] = p.quit().decode()
print(json.dumps(out))
`;

test('rookery record --protocol pop3 in front of Dovecot, then rookery replay on the POP3 listener: poplib gets the same answers', { timeout: 60_000 }, async (t) => {
  const dovecot = await startDovecotPop3();
  if (dovecot === null) return t.skip('dovecot with pop3 is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'rookery-record-pop3-'));
  const file = join(dir, 'pop3.txt');
  try {
    await dovecot.load('alice', [Buffer.from(mail('one')), Buffer.from(mail('two'))]);
    const child = spawn(process.execPath, [CLI, 'record', '--protocol', 'pop3', '--upstream', `127.0.0.1:${dovecot.pop3}`, '--listen', '0', '--out', file]);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const proxyPort = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 10_000);
      child.stdout.on('data', () => {
        const m = /listening on [^:]+:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    const original = JSON.parse(await python(SESSION(proxyPort, 'pass'))) as { capa: string[]; retr: string[] };
    assert.ok(original.retr.includes('Subject: two'));
    assert.ok(!original.capa.includes('STLS'), 'the proxy does not offer STLS');
    for (let i = 0; i < 400 && !/session 1 closed/.test(out); i++) await new Promise((r) => setTimeout(r, 5));
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /\n\d+ C: PASS \*\*\*\n/);
    assert.doesNotMatch(text, /C: PASS pass\n/);

    const replay = await startCli(['replay', file, '--port', '0', '--pop3-port', '0']);
    try {
      // The POP3 line comes after the IMAP one the helper waited for.
      for (let i = 0; i < 400 && !/POP3 listening on/.test(replay.output()); i++) await new Promise((r) => setTimeout(r, 5));
      const m = /POP3 listening on [^:]+:(\d+)/.exec(replay.output());
      assert.ok(m, replay.output());
      const replayed = JSON.parse(await python(SESSION(Number(m[1]), 'another password'))) as unknown;
      assert.deepEqual(replayed, original);
    } finally {
      replay.child.kill('SIGTERM');
      await exited(replay.child);
    }
  } finally {
    await dovecot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the POP3 recording proxy in front of a server that offers STLS: CAPA comes without it, STLS is refused by the proxy, a RETR body line "STLS" passes', { timeout: 30_000 }, async () => {
  const { server, pop3 } = await startPop3({}, { stls: true });
  const recorder = await startRecorder({ upstream: { host: '127.0.0.1', port: pop3 }, protocol: 'pop3' });
  try {
    server.control.addMessage('INBOX', { raw: 'Subject: x\r\n\r\nSTLS\r\n' });
    const direct = await WireClient.connect(pop3);
    await direct.line();
    direct.socket.write('CAPA\r\n');
    assert.ok((await direct.multi()).toString('latin1').includes('STLS'), 'the upstream offers STLS');
    direct.socket.end();
    const c = await WireClient.connect(recorder.address.port);
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('CAPA\r\n');
    const capa = (await c.multi()).toString('latin1');
    assert.ok(!capa.includes('STLS') && capa.includes('UIDL'), capa);
    c.socket.write('STLS\r\n');
    assert.equal(await c.line(), '-ERR STLS is off while rookery record records this connection');
    c.socket.write('USER testuser\r\n');
    await c.line();
    c.socket.write('PASS testpass\r\n');
    assert.match(String(await c.line()), /^\+OK/);
    c.socket.write('RETR 1\r\n');
    assert.match((await c.multi()).toString('latin1'), /\r\nSTLS\r\n/);
    c.socket.write('QUIT\r\n');
    await c.line();
    for (let i = 0; i < 400 && recorder.sessions.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    const text = recorder.sessions[0]!.text();
    assert.match(text, /\n\d+ C: STLS\n\d+ S: -ERR STLS is off/);
    assert.match(text, /\n\d+ C: PASS \*\*\*\n/);
  } finally {
    await recorder.close();
    await server.stop();
  }
});
