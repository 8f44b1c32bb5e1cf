/**
 * The authorization server as Python clients meet it: Debian's authlib and
 * requests-oauthlib (for /usr/bin/python3) doing the code flow with PKCE,
 * a refresh with rotation, a reuse that revokes the grant and the device
 * flow; then imaplib's authenticate('XOAUTH2', ...) with the token, the
 * session ended when the server clock passes the token's end, and the
 * re-login with a refreshed token.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { startOAuth } from './helpers.js';

const PYTHON = '/usr/bin/python3';
const skip = spawnSync(PYTHON, ['-c', 'import authlib, requests_oauthlib']).status === 0 || process.env.CI ? false : `${PYTHON} without authlib / requests-oauthlib`;

function python(script: string, args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) =>
    execFile(PYTHON, ['-c', script, ...args], { timeout: 30_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}\n${stdout}`)) : resolve(stdout.trim().split('\n')))),
  );
}

const AUTHLIB = `
import sys, secrets, requests
from authlib.integrations.requests_client import OAuth2Session
base = sys.argv[1]
meta = requests.get(base + "/.well-known/oauth-authorization-server").json()
s = OAuth2Session("testpublic", scope="https://mail.google.com/ offline_access", redirect_uri="http://127.0.0.1:8400/cb",
                  code_challenge_method="S256", token_endpoint_auth_method="none")
verifier = secrets.token_urlsafe(48)
url, state = s.create_authorization_url(meta["authorization_endpoint"], code_verifier=verifier)
back = requests.get(url, allow_redirects=False).headers["Location"]
tok = s.fetch_token(meta["token_endpoint"], authorization_response=back, code_verifier=verifier)
print("code", tok["token_type"], tok["expires_in"], "refresh" if tok.get("refresh_token") else "none")
new = s.refresh_token(meta["token_endpoint"], refresh_token=tok["refresh_token"])
print("rotated", new["refresh_token"] != tok["refresh_token"])
try:
    s.refresh_token(meta["token_endpoint"], refresh_token=tok["refresh_token"])
    print("reuse accepted")
except Exception as e:
    print("reuse", getattr(e, "error", type(e).__name__))
try:
    s.refresh_token(meta["token_endpoint"], refresh_token=new["refresh_token"])
    print("grant alive")
except Exception as e:
    print("grant", getattr(e, "error", type(e).__name__))
# The device flow: authorization_pending until the user approves (over REST), then tokens.
d = requests.post(meta["device_authorization_endpoint"], data={"client_id": "testpublic", "scope": "https://mail.google.com/"}).json()
seen = []
for i in range(10):
    try:
        t = s.fetch_token(meta["token_endpoint"], grant_type="urn:ietf:params:oauth:grant-type:device_code", device_code=d["device_code"])
        print("device", " ".join(seen), t["token_type"])
        break
    except Exception as e:
        seen.append(getattr(e, "error", type(e).__name__))
        if len(seen) == 1:
            r = requests.post(base + "/v1/oauth/device", json={"userCode": d["user_code"], "decision": "approve"})
            seen.append(str(r.status_code))
`;

const REQUESTS_OAUTHLIB = `
import os, sys, base64, hashlib, secrets, requests
# oauthlib refuses plain http unless told this is a local test (its documented switch).
os.environ["OAUTHLIB_INSECURE_TRANSPORT"] = "1"
from requests_oauthlib import OAuth2Session
base = sys.argv[1]
meta = requests.get(base + "/.well-known/openid-configuration").json()
verifier = secrets.token_urlsafe(48)
challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
s = OAuth2Session("testclient", redirect_uri="http://localhost:8401/cb", scope=["https://mail.google.com/"])
url, state = s.authorization_url(meta["authorization_endpoint"], code_challenge=challenge, code_challenge_method="S256")
back = requests.get(url, allow_redirects=False).headers["Location"]
tok = s.fetch_token(meta["token_endpoint"], authorization_response=back, client_secret="testsecret", code_verifier=verifier)
print("code", tok["token_type"], "refresh" if tok.get("refresh_token") else "none")
new = s.refresh_token(meta["token_endpoint"], refresh_token=tok["refresh_token"], auth=("testclient", "testsecret"))
print("rotated", new["refresh_token"] != tok["refresh_token"])
try:
    s.refresh_token(meta["token_endpoint"], refresh_token=tok["refresh_token"], auth=("testclient", "testsecret"))
    print("reuse accepted")
except Exception as e:
    print("reuse", getattr(e, "error", type(e).__name__))
`;

const IMAPLIB = `
import sys, imaplib, requests
base, port = sys.argv[1], int(sys.argv[2])
def login(token):
    m = imaplib.IMAP4("127.0.0.1", port)
    m.authenticate("XOAUTH2", lambda _: ("user=testuser\\x01auth=Bearer %s\\x01\\x01" % token).encode())
    return m
t = requests.post(base + "/v1/oauth/tokens", json={"user": "testuser", "client": "testclient"}).json()
m = login(t["access_token"])
print("login", m.select("INBOX")[0])
requests.post(base + "/v1/clock", json={"advance": 3600000})
try:
    m.noop()
    print("still open")
except imaplib.IMAP4.abort as e:
    print("ended", str(e))
try:
    login(t["access_token"])
    print("stale accepted")
except imaplib.IMAP4.error as e:
    print("stale refused", str(e))
r = requests.post(base + "/oauth/token", data={"grant_type": "refresh_token", "refresh_token": t["refresh_token"]}, auth=("testclient", "testsecret")).json()
m = login(r["access_token"])
print("relogin", m.select("INBOX")[0])
m.logout()
`;

test('authlib: code flow with PKCE, rotation, reuse revoking the grant, device flow', { skip, timeout: 40_000 }, async () => {
  const { server, base } = await startOAuth({ oauth: { approval: 'manual', deviceInterval: 0 } });
  try {
    // The code flow is decided at once by a queued decision; the device code waits for the REST approval.
    server.control.oauth.decide({ decision: 'approve' });
    const out = await python(AUTHLIB, [base]);
    assert.deepEqual(out, ['code Bearer 3600 refresh', 'rotated True', 'reuse invalid_grant', 'grant invalid_grant', 'device authorization_pending 200 Bearer']);
  } finally {
    await server.stop();
  }
});

test('requests-oauthlib: code flow with PKCE of a confidential client, rotation, reuse refused', { skip, timeout: 40_000 }, async () => {
  const { server, base } = await startOAuth();
  try {
    const out = await python(REQUESTS_OAUTHLIB, [base]);
    assert.deepEqual(out, ['code Bearer refresh', 'rotated True', 'reuse invalid_grant']);
  } finally {
    await server.stop();
  }
});

test("imaplib authenticate('XOAUTH2'): the session ends with the token, a refreshed token logs in again", { skip, timeout: 40_000 }, async () => {
  const { server, base, imapPort } = await startOAuth({ now: Date.UTC(2026, 0, 5), plugins: ['AUTH=XOAUTH2'] });
  try {
    const out = await python(IMAPLIB, [base, String(imapPort)]);
    assert.equal(out[0], 'login OK');
    assert.match(out[1]!, /^ended .*Access token expired/);
    assert.match(out[2]!, /^stale refused .*AUTHENTICATIONFAILED/);
    assert.equal(out[3], 'relogin OK');
  } finally {
    await server.stop();
  }
});
