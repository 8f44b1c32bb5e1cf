"""Rookery from Python, with nothing but the standard library.

    from rookery import Rookery

    with Rookery(["--plugin", "all"]) as server:
        server.add_message("INBOX", "Subject: hi\\r\\n\\r\\nhello\\r\\n")
        imap = imaplib.IMAP4(server.imap_host, server.imap_port)
        ...

Rookery(...) starts the ``rookery`` command on free ports (``--port 0
--rest-port 0 --ready-json``), waits for its ready line, and offers a small
client of the REST API (``/v1``). ``stop()`` (or leaving the ``with``
block) asks the server to shut down over REST and waits for the process.

The command is, in this order: the ``command`` argument (a list, or the
path of the executable as a string), the ROOKERY_BIN environment variable
(the path of the executable), the ROOKERY environment variable (a command
split like a shell, e.g. ``npx rookery``), ``node_modules/.bin/rookery``
in the working directory or the nearest parent that has one, the single
executable shipped inside a platform wheel of the Python package
(``rookery_bin/rookery``), or ``rookery`` on the PATH. When none is found,
RookeryError says where it looked. Shipped in the npm package as
``python/rookery.py``; the Python package (python/pyproject.toml) adds the
pytest plugin ``rookery_pytest``.

Test boundaries: ``test_started(name)`` and ``test_finished(name, passed)``
put ``mark`` events in the stream (the dashboard shows them as dividers).
With ROOKERY_KEEP=1 in the environment (or ``keep_on_failure=True``), a
test finished with ``passed=False`` leaves its server running as it was:
its addresses are printed on stderr (or given to ``announce``, a function
of one line), the object goes on with a new server,
and ``stop()`` then waits until the process is interrupted (Ctrl-C) before
it stops the kept one.
"""
import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = ["Rookery", "RookeryError", "find_command", "shipped_executable"]


class RookeryError(Exception):
    """A REST call answered an error (``status`` and the spec's ``code``), or the command failed."""

    def __init__(self, message, status=None, code=None, body=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.body = body


def _local_bins(start):
    """``node_modules/.bin/rookery`` of ``start`` and of every parent directory, nearest first."""
    here = os.path.abspath(start)
    while True:
        yield os.path.join(here, "node_modules", ".bin", "rookery")
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_command(command=None, cwd=None):
    """The rookery command as a list; RookeryError (one sentence: where it looked) when there is none."""
    if isinstance(command, (str, os.PathLike)):
        path = os.fspath(command)
        if not _executable(path) and not shutil.which(path):
            raise RookeryError("rookery command not found: %r (the command argument) is not an executable file" % path)
        return [path]
    if command:
        return list(command)
    chosen = os.environ.get("ROOKERY_BIN")
    if chosen:
        if not _executable(chosen):
            raise RookeryError("rookery command not found: ROOKERY_BIN is %r, which is not an executable file" % chosen)
        return [chosen]
    env = os.environ.get("ROOKERY")
    if env:
        return shlex.split(env)
    start = cwd or os.getcwd()
    for local in _local_bins(start):
        if _executable(local):
            return [local]
    shipped = shipped_executable()
    if shipped:
        return [shipped]
    on_path = shutil.which("rookery")
    if on_path:
        return [on_path]
    raise RookeryError(
        "rookery command not found: ROOKERY_BIN and ROOKERY are not set, there is no node_modules/.bin/rookery "
        "in %s or any parent directory, no executable shipped in this Python package (a platform wheel has one), "
        "and none on the PATH (%s); install the package in the project, "
        "or pass Rookery(command=...) or set ROOKERY_BIN to the command's path"
        % (os.path.abspath(start), os.environ.get("PATH", ""))
    )


def shipped_executable():
    """The single executable a platform wheel ships (``rookery_bin/rookery``), or None (a pure wheel, or a copy of this file)."""
    try:
        import rookery_bin
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(rookery_bin.__file__)), "rookery")
    if not os.path.isfile(path):
        return None
    if not os.access(path, os.X_OK):
        # an installer that dropped the mode bits: put them back where the files are ours to change
        try:
            os.chmod(path, 0o755)
        except OSError:
            return None
    return path


class Rookery:
    """A running ``rookery`` command on free ports, with a small REST client."""

    def __init__(self, args=(), command=None, token=None, start_timeout=30.0, env=None, keep_on_failure=None,
                 announce=None):
        self.args = list(args)
        self.command = find_command(command)
        self.token = token
        self.start_timeout = start_timeout
        if env is None and self.command == [shipped_executable()]:
            # The single executable is node: it would apply a NODE_OPTIONS meant for something else before starting.
            env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
        self.env = env
        self.announce = announce
        self.process = None
        self.ready = None
        self._stderr = []
        if keep_on_failure is None:
            keep_on_failure = os.environ.get("ROOKERY_KEEP", "").strip().lower() in ("1", "true", "yes")
        self.keep_on_failure = keep_on_failure
        # (process, ready line, test name) of the server a failed test left open
        self.kept = None

    # -- lifecycle -------------------------------------------------------

    def start(self):
        """Start the command and wait until it is ready; returns self."""
        argv = self.command + ["--port", "0", "--rest-port", "0", "--ready-json"] + self.args
        if self.token is not None:
            argv += ["--rest-token", self.token]
        try:
            self.process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=self.env, text=True, encoding="utf-8",
            )
        except OSError as err:
            raise RookeryError("rookery command could not be started: %s (%s)" % (shlex.join(self.command), err.strerror)) from None
        drain = threading.Thread(target=self._drain_stderr, daemon=True)
        drain.start()
        line = [None]

        def read_ready():
            line[0] = self.process.stdout.readline()

        reader = threading.Thread(target=read_ready, daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        if not line[0]:
            self.process.kill()
            self.process.wait()
            drain.join(2)  # the reason is on stderr: read it all before reporting
            raise RookeryError("rookery did not become ready (exit code %s): %s"
                               % (self.process.returncode, "".join(self._stderr).strip()))
        self.ready = json.loads(line[0])
        # Nothing more is printed on stdout; keep draining so the pipe never fills.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        return self

    def _drain_stderr(self):
        for text in self.process.stderr:
            if len(self._stderr) < 200:
                self._stderr.append(text)

    def stop(self, timeout=15.0):
        """Shut the server down over REST (graceful) and wait for the process; kill it if it hangs.

        With a server kept by a failed test, first wait until this process is
        interrupted (Ctrl-C), so that server can be looked at, then stop it too.
        """
        self._shutdown(self.process, self.ready, timeout)
        if self.kept is None:
            return
        process, ready, name = self.kept
        self.kept = None
        if process.poll() is not None:
            return
        self._announce("%s. It stays up until this process is stopped (Ctrl-C)." % _kept_line(name, ready))
        try:
            process.wait()
        except KeyboardInterrupt:
            pass
        finally:
            self._shutdown(process, ready, timeout)

    def _shutdown(self, process, ready, timeout):
        if process is None or process.poll() is not None:
            return
        try:
            self._call(ready, "POST", "/shutdown", {}, 30.0)
            process.wait(timeout)
        except (RookeryError, OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()

    # -- test boundaries -------------------------------------------------

    def mark(self, text, phase=None, outcome=None):
        """Put a ``mark`` event in the stream (a note, or a test's start or end); returns its event id."""
        body = {"text": text}
        if phase is not None:
            body["phase"] = phase
        if outcome is not None:
            body["outcome"] = outcome
        return self.request("POST", "/events/mark", body)["id"]

    def test_started(self, name):
        """Mark a test's start (call it after ``reset()``)."""
        return self.mark(name[:1024], "start")

    def test_finished(self, name, passed):
        """Mark a test's end; with ``keep_on_failure`` a failed test's server is kept and a new one started."""
        self.mark(name[:1024], "end", None if passed is None else ("pass" if passed else "fail"))
        if passed is not False or not self.keep_on_failure:
            return
        before = self.kept
        self.kept = (self.process, self.ready, name)
        self._announce(_kept_line(name, self.ready))
        if before is not None:
            self._shutdown(before[0], before[1], 15.0)
        self.process = None
        self.ready = None
        self._stderr = []
        self.start()

    def _announce(self, line):
        if self.announce is not None:
            self.announce(line)
            return
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- addresses -------------------------------------------------------

    @property
    def imap_host(self):
        return self.ready["imap"]["host"]

    @property
    def imap_port(self):
        return self.ready["imap"]["port"]

    @property
    def smtp_host(self):
        """The SMTP intake's address; RookeryError when it is off (start with ``--smtp-port 0``)."""
        return self._smtp()["host"]

    @property
    def smtp_port(self):
        return self._smtp()["port"]

    def _smtp(self):
        smtp = self.ready.get("smtp")
        if not smtp:
            raise RookeryError("SMTP intake is off: start Rookery with [\"--smtp-port\", \"0\"] in its args")
        return smtp

    @property
    def rest_url(self):
        """The REST base URL, e.g. ``http://127.0.0.1:40124/v1``."""
        return self.ready["rest"]["url"]

    # -- REST ------------------------------------------------------------

    def request(self, method, path, body=None, timeout=30.0):
        """One REST call (``path`` below ``/v1``); returns the decoded JSON, or None for an empty answer."""
        return self._call(self.ready, method, path, body, timeout)

    def _call(self, ready, method, path, body, timeout):
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token is not None:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(ready["rest"]["url"] + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                text = response.read()
        except urllib.error.HTTPError as err:
            text = err.read()
            try:
                error = json.loads(text)["error"]
                raise RookeryError("%s %s: %s %s" % (method, path, error.get("code"), error.get("message")),
                                   err.code, error.get("code"), error) from None
            except (ValueError, KeyError, TypeError):
                raise RookeryError("%s %s: HTTP %s" % (method, path, err.code), err.code) from None
        return json.loads(text) if text else None

    @staticmethod
    def _mailbox(path):
        return "/mailboxes/" + urllib.parse.quote(path, safe="")

    def add_message(self, mailbox, raw, flags=None, internaldate=None):
        """Deliver a message (``raw``: str or bytes); returns ``{"uid", "uidvalidity"}``."""
        body = {"raw": raw} if isinstance(raw, str) else {"raw": base64.b64encode(raw).decode("ascii"), "encoding": "base64"}
        if flags is not None:
            body["flags"] = list(flags)
        if internaldate is not None:
            body["internaldate"] = internaldate
        return self.request("POST", self._mailbox(mailbox) + "/messages", body)

    def messages(self, mailbox):
        """The messages of a mailbox (uid, flags, internaldate, size, modseq)."""
        return self.request("GET", self._mailbox(mailbox) + "/messages")

    def mailboxes(self):
        return self.request("GET", "/mailboxes")

    def create_mailbox(self, path):
        return self.request("POST", "/mailboxes", {"path": path})

    def add_rule(self, rule):
        """Add a script rule (or a list of rules); see docs/script-rules.md."""
        return self.request("POST", "/script/rules", rule)

    def clear_rules(self):
        return self.request("DELETE", "/script/rules")

    def sessions(self):
        return self.request("GET", "/sessions")

    def wait_for(self, types=None, match=None, since=None, timeout_ms=5000, **conditions):
        """Long-poll ``GET /events/wait``: the first event of ``types`` (a name or list) whose fields
        ``match`` (a dict, e.g. ``{"path": "INBOX"}``), after event id ``since``; or a state condition
        given as keywords (``mailbox="INBOX", messages=2`` or ``session=3``). Raises RookeryError
        (status 408, code TIMEOUT) when nothing matches in time."""
        query = [("timeout", str(timeout_ms))]
        if types:
            query.append(("types", types if isinstance(types, str) else ",".join(types)))
        if match:
            query.append(("match", ",".join("%s=%s" % (k, v) for k, v in match.items())))
        if since is not None:
            query.append(("since", str(since)))
        query += [(k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in conditions.items()]
        return self.request("GET", "/events/wait?" + urllib.parse.urlencode(query), timeout=timeout_ms / 1000 + 10)

    def latest_event(self):
        """The newest event id: a ``since`` for a later ``wait_for``."""
        return self.request("GET", "/events/latest")["id"]

    def wait_until(self, predicate=None, timeout=5.0, **state):
        """Wait for a state instead of sleeping; returns what held.

        With keywords, the server waits (``GET /events/wait``):
        ``wait_until(mailbox="INBOX", messages=2)`` (at least two messages; ``user=`` for a user's
        own tree) or ``wait_until(session=3, idling=True)``. With a function, it is called now and
        again after every event the server emits, until it returns something truthy, which is
        returned. Raises RookeryError (status 408, code TIMEOUT) after ``timeout`` seconds.
        """
        if predicate is None:
            if not state:
                raise TypeError("wait_until: give a function or a state (mailbox=..., messages=... or session=..., idling=...)")
            return self.wait_for(timeout_ms=int(timeout * 1000), **state)["data"]
        if state:
            raise TypeError("wait_until: give a function or a state, not both")
        deadline = time.monotonic() + timeout
        since = self.latest_event()
        while True:
            value = predicate()
            if value:
                return value
            left = deadline - time.monotonic()
            if left <= 0:
                raise RookeryError("wait_until: %r did not hold within %s s" % (predicate, timeout), 408, "TIMEOUT")
            try:
                # Any event may be what changes the answer; the stream's id is read first so none is missed.
                since = self.wait_for(since=since, timeout_ms=max(1, int(left * 1000)))["id"]
            except RookeryError as err:
                if err.status != 408:
                    raise

    # -- users -----------------------------------------------------------

    def users(self):
        """The users (names and what they can log in with, no credentials)."""
        return self.request("GET", "/users")

    def add_user(self, name, password=None, xoauth2=None):
        body = {"name": name}
        if password is not None:
            body["password"] = password
        if xoauth2 is not None:
            body["xoauth2"] = xoauth2
        return self.request("POST", "/users", body)

    def update_user(self, name, password=None, xoauth2=None):
        body = {}
        if password is not None:
            body["password"] = password
        if xoauth2 is not None:
            body["xoauth2"] = xoauth2
        return self.request("PUT", "/users/" + urllib.parse.quote(name, safe=""), body)

    def delete_user(self, name, disconnect=True):
        return self.request("DELETE", "/users/" + urllib.parse.quote(name, safe=""), {"disconnect": disconnect})

    # -- messages and mailboxes ------------------------------------------

    def message(self, mailbox, uid):
        """One message with its source."""
        return self.request("GET", "%s/messages/%d" % (self._mailbox(mailbox), uid))

    def set_flags(self, mailbox, uids, flags, mode="set"):
        """Set (``mode="set"``), add or remove flags of messages by UID; returns each one's flags."""
        return self.request("POST", self._mailbox(mailbox) + "/messages/flags",
                            {"uids": list(uids), "flags": list(flags), "mode": mode})

    def add_flags(self, mailbox, uids, flags):
        return self.set_flags(mailbox, uids, flags, "add")

    def remove_flags(self, mailbox, uids, flags):
        return self.set_flags(mailbox, uids, flags, "remove")

    def expunge(self, mailbox, uids):
        """Remove messages by UID (sessions see EXPUNGE as after a client's); returns ``{"uids"}``."""
        return self.request("POST", self._mailbox(mailbox) + "/messages/expunge", {"uids": list(uids)})

    def copy_messages(self, mailbox, uids, target):
        return self.request("POST", self._mailbox(mailbox) + "/messages/copy", {"uids": list(uids), "target": target})

    def move_messages(self, mailbox, uids, target):
        return self.request("POST", self._mailbox(mailbox) + "/messages/move", {"uids": list(uids), "target": target})

    def mailbox(self, path):
        """One mailbox's counts (messages, unseen, uidnext, ...)."""
        return self.request("GET", self._mailbox(path))

    def delete_mailbox(self, path):
        return self.request("DELETE", self._mailbox(path), {})

    def rules(self):
        """The script rules in force."""
        return self.request("GET", "/script/rules")

    def remove_rule(self, rule_id):
        return self.request("DELETE", "/script/rules/%s" % urllib.parse.quote(str(rule_id), safe=""), {})

    # -- the client checker ----------------------------------------------

    def client_findings(self, session=None, since=None):
        """Where clients broke the protocol (docs/client-check.md), oldest first; ``since`` is a finding id."""
        query = []
        if session is not None:
            query.append(("session", str(session)))
        if since is not None:
            query.append(("since", str(since)))
        return self.request("GET", "/client/findings" + ("?" + urllib.parse.urlencode(query) if query else ""))

    def clear_client_findings(self):
        return self.request("DELETE", "/client/findings", {})

    def transcript(self, session):
        """A live or recently closed session's bytes in and out, as text."""
        req = urllib.request.Request("%s/sessions/%d/transcript?format=text" % (self.rest_url, session),
                                     headers=self._auth({"Accept": "text/plain"}))
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                return response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as err:
            raise RookeryError("GET /sessions/%d/transcript: HTTP %s" % (session, err.code), err.code) from None

    def _auth(self, headers):
        if self.token is not None:
            headers["Authorization"] = "Bearer " + self.token
        return headers

    def reset(self):
        """Mailboxes and users back to the options' (between tests)."""
        return self.request("POST", "/reset", {})

    def snapshot(self):
        return self.request("GET", "/snapshot")


def _kept_line(name, ready):
    rest = ready["rest"]["url"]
    return ("rookery: test %s failed; its server stays open as the test left it: IMAP %s:%s, dashboard %s, REST %s"
            % (json.dumps(name), ready["imap"]["host"], ready["imap"]["port"], rest[:-len("/v1")] + "/", rest))
