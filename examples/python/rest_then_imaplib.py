#!/usr/bin/env python3
"""Drive Rookery from Python with nothing but the standard library.

1. Start the `rookery` command on free ports and read the ports it prints.
2. Deliver a message to INBOX through the REST API.
3. Log in with imaplib and fetch that message's subject.
4. Stop the server through the REST API and check that it exits cleanly.

The command line comes from the ROOKERY environment variable (default
"rookery"), for example ROOKERY="node dist/cli.js" or ROOKERY="npx rookery".
"""
import imaplib
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import urllib.request

SUBJECT = "Hello from REST"


def expect(condition, message):
    """Like assert, but also under `python -O`."""
    if not condition:
        raise RuntimeError(message)


def rest(base, method, path, body=None):
    """Send one REST request with a JSON body; return (status, decoded JSON)."""
    data = json.dumps(body if body is not None else {}).encode("utf-8")
    request = urllib.request.Request(
        base + path, data=data, method=method,
        headers={"Content-Type": "application/json"},  # every POST must be JSON
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def start_rookery():
    """Start the server on free ports (0); return the process, IMAP port and REST base URL."""
    command = shlex.split(os.environ.get("ROOKERY", "rookery")) + ["--port", "0", "--rest-port", "0"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    # Start-up lines look like:
    #   rookery 5.0.0: IMAP listening on 127.0.0.1:40123
    #   rookery: REST API listening on http://127.0.0.1:40124/v1
    imap_port = rest_base = None
    for line in proc.stdout:
        match = re.search(r"IMAP listening on \S+:(\d+)", line)
        if match:
            imap_port = int(match.group(1))
        match = re.search(r"REST API listening on (http://\S+)/v1", line)
        if match:
            rest_base = match.group(1)
        if imap_port and rest_base:
            return proc, imap_port, rest_base
    raise RuntimeError("rookery exited before printing its ports (exit code %s)" % proc.wait())


def main():
    proc, imap_port, base = start_rookery()
    # A safety net for the example: never leave a server running if something hangs.
    watchdog = threading.Timer(30, proc.kill)
    watchdog.start()
    try:
        # Deliver a message like an MTA would; connected clients would see EXISTS.
        raw = "From: alice@example.com\r\nTo: testuser@example.com\r\nSubject: %s\r\n\r\nHi!\r\n" % SUBJECT
        status, added = rest(base, "POST", "/v1/mailboxes/INBOX/messages", {"raw": raw})
        expect(status == 201, "add message: HTTP %s" % status)
        uid = added["uid"]

        # Read it back over IMAP as the default user.
        imap = imaplib.IMAP4("127.0.0.1", imap_port)
        imap.login("testuser", "testpass")
        imap.select("INBOX")
        typ, data = imap.uid("FETCH", str(uid), "(BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        expect(typ == "OK", "FETCH: %s %r" % (typ, data))
        header = data[0][1].decode("utf-8")
        subject = re.search(r"^Subject: (.*?)\r?$", header, re.M | re.I).group(1)
        expect(subject == SUBJECT, "wrong subject %r" % subject)
        imap.logout()

        # Stop the server: it answers 202 first, then the command exits with 0.
        status, answer = rest(base, "POST", "/v1/shutdown")
        expect(status == 202 and answer == {"shutdown": True}, "shutdown: %s %r" % (status, answer))
        proc.stdout.read()  # drain what is left of its output
        code = proc.wait(timeout=10)
        expect(code == 0, "rookery exited with %s" % code)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    print("OK: delivered over REST, fetched over IMAP: %r (UID %d)" % (subject, uid))


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # any failure: say what and exit non-zero
        print("FAILED: %r" % (error,), file=sys.stderr)
        sys.exit(1)
