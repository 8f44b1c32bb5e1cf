"""The pytest plugin of Rookery (registered by the package's ``pytest11`` entry point).

    def test_fetch(rookery):                      # a server shared by the session, reset for this test
        rookery.add_message("INBOX", "Subject: hi\\r\\n\\r\\nhello\\r\\n")
        imap = imaplib.IMAP4(rookery.imap_host, rookery.imap_port)
        ...

    @pytest.mark.rookery(plugins=["all"], preset="dovecot", users={"alice": "secret"})
    def test_with_settings(rookery):              # a server of these settings, shared by the tests that ask for them
        ...

    def test_alone(rookery_fresh):                # a server of its own, stopped after the test
        ...

Servers are started on first use and stopped when pytest ends. A failed
test gets a section ``rookery client report`` in its report: the client
checker's findings of that test (docs/client-check.md), also in
``user_properties`` (so in JUnit XML). With ROOKERY_KEEP=1 (or
``--rookery-keep``) a failed test's server stays open as the test left it:
its addresses are printed on the terminal, the next tests get a new server,
and pytest waits at the end until it is interrupted (Ctrl-C).
"""
import json
import os
import shutil
import tempfile

import pytest

from rookery import Rookery, RookeryError, _kept_line

_MARKER = (
    "rookery(plugins=None, preset=None, users=None, options=None, args=(), smtp=False, fresh=False): "
    "the settings of the test's Rookery server (plugins: names or 'all'; preset: gmail, outlook, yahoo, icloud "
    "or dovecot; users: {name: password or {password, xoauth2}}; options: any server options, as a --config file; "
    "args: more command flags; smtp: SMTP intake on a free port; fresh: a server for this test alone). "
    "Tests with the same settings share one server."
)
_KEYS = ("plugins", "preset", "users", "options", "args", "smtp", "fresh")
_PLUGIN = "rookery-servers"


def pytest_addoption(parser):
    group = parser.getgroup("rookery", "Rookery mail server")
    group.addoption("--rookery-bin", default=None, metavar="PATH",
                    help="the rookery command to start (default: ROOKERY_BIN, ROOKERY, node_modules/.bin, "
                         "the executable of a platform wheel, PATH)")
    group.addoption("--rookery-keep", action="store_true", default=False,
                    help="keep a failed test's server open until pytest is interrupted (as ROOKERY_KEEP=1)")
    parser.addini("rookery_args", type="args", default=[], help="flags every Rookery server of the run gets")


def pytest_configure(config):
    config.addinivalue_line("markers", _MARKER)
    config.pluginmanager.register(_Servers(config), _PLUGIN)


class _Settings:
    """One marker's settings: the command flags, and the options that go into a --config file."""

    def __init__(self, marker, ini_args):
        kwargs = dict(marker.kwargs) if marker is not None else {}
        if marker is not None and marker.args:
            raise pytest.UsageError("@pytest.mark.rookery takes keywords only (%s), got %r" % (", ".join(_KEYS), marker.args))
        unknown = sorted(set(kwargs) - set(_KEYS))
        if unknown:
            raise pytest.UsageError("@pytest.mark.rookery: unknown keyword %s; the keywords are %s"
                                    % (", ".join(map(repr, unknown)), ", ".join(_KEYS)))
        self.fresh = bool(kwargs.get("fresh", False))
        args = list(ini_args)
        plugins = kwargs.get("plugins")
        if plugins is not None:
            args += ["--plugin", plugins if isinstance(plugins, str) else ",".join(plugins)]
        if kwargs.get("preset") is not None:
            args += ["--preset", str(kwargs["preset"])]
        if kwargs.get("smtp"):
            args += ["--smtp-port", "0"]
        extra = kwargs.get("args", ())
        if isinstance(extra, str):
            raise pytest.UsageError("@pytest.mark.rookery: args is a list of flags, e.g. [\"--plugin\", \"all\"], got %r" % extra)
        args += [str(a) for a in extra]
        options = dict(kwargs.get("options") or {})
        users = kwargs.get("users")
        if users is not None:
            options["users"] = {name: ({"password": spec} if isinstance(spec, str) else dict(spec))
                                for name, spec in users.items()}
        self.args = args
        self.options = options
        # Servers with different settings are different servers; equal settings share one.
        self.key = json.dumps({"args": args, "options": options}, sort_keys=True)


class _Servers:
    """The run's servers: one per settings, started on first use; the kept ones of failed tests."""

    def __init__(self, config):
        self.config = config
        self.shared = {}
        self.fresh = []
        self.config_dir = None
        # Registered late (``pytest_plugins = ["rookery_pytest"]`` in a test module) the options were not on the command line.
        self.keep = True if config.getoption("rookery_keep", False) else None
        self.command = config.getoption("rookery_bin", None)
        try:
            self.ini_args = config.getini("rookery_args")
        except ValueError:
            self.ini_args = []

    # -- starting --------------------------------------------------------

    def _new(self, settings, keep):
        args = list(settings.args)
        if settings.options:
            if self.config_dir is None:
                self.config_dir = tempfile.mkdtemp(prefix="rookery-pytest-")
            path = os.path.join(self.config_dir, "options-%d.json" % (len(os.listdir(self.config_dir)) + 1))
            with open(path, "w", encoding="utf-8") as out:
                json.dump(settings.options, out)
            args += ["--config", path]
        return Rookery(args, command=self.command, keep_on_failure=keep,
                       announce=self.announce).start()

    def server(self, node, fresh):
        marker = node.get_closest_marker("rookery")
        settings = _Settings(marker, self.ini_args)
        if fresh or settings.fresh:
            # The plugin keeps a fresh server itself: Rookery's own keeping would start a replacement no test uses.
            server = self._new(settings, False)
            self.fresh.append(server)
            return server, True
        server = self.shared.get(settings.key)
        if server is None:
            server = self.shared[settings.key] = self._new(settings, self.keep)
        else:
            server.reset()
        return server, False

    # -- reporting -------------------------------------------------------

    def announce(self, line):
        """A line on the terminal now, even while pytest captures output (no -s needed)."""
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        capture = self.config.pluginmanager.getplugin("capturemanager")
        if reporter is None:
            import sys
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
            return
        if capture is None:
            self._write(reporter, line)
            return
        with capture.global_and_fixture_disabled():
            self._write(reporter, line)

    @staticmethod
    def _write(reporter, line):
        # after a progress letter (".F") the line is not ended yet, whatever the reporter believes
        if getattr(reporter._tw, "width_of_current_line", 0):
            reporter._tw.line()
        reporter.write_line(line)

    def keep_fresh(self, server, name):
        """A failed test's fresh server, kept as it is until the end of the run."""
        for other in self.fresh:
            if other is not server and other.kept is not None:
                # only the last failed test's server is kept, as with the Node helper
                other._shutdown(other.kept[0], other.kept[1], 15.0)
                other.kept = None
        self.announce(_kept_line(name, server.ready))
        server.kept = (server.process, server.ready, name)
        server.process = None
        server.ready = None

    # -- the end of the run ----------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_unconfigure(self, config):
        servers = list(self.shared.values()) + self.fresh
        kept = []
        for server in servers:
            if server.kept is not None:
                kept.append((server, server.kept))
                server.kept = None
            server.stop()
        try:
            if kept:
                for _, (process, ready, name) in kept:
                    if process.poll() is None:
                        self.announce("%s. It stays up until this process is stopped (Ctrl-C)." % _kept_line(name, ready))
                try:
                    for _, (process, _ready, _name) in kept:
                        process.wait()
                except KeyboardInterrupt:
                    pass
        finally:
            for server, (process, ready, _name) in kept:
                server._shutdown(process, ready, 15.0)
            if self.config_dir is not None:
                shutil.rmtree(self.config_dir, ignore_errors=True)


def _serve(request, fresh):
    servers = request.config.pluginmanager.getplugin(_PLUGIN)
    node = request.node
    server, alone = servers.server(node, fresh)
    used = node.__dict__.setdefault("_rookery_servers", [])
    used.append(server)
    server.test_started(node.nodeid)
    yield server
    reports = node.__dict__.get("_rookery_reports", {})
    passed = not any(report.failed for report in reports.values())
    if alone:
        server.test_finished(node.nodeid, passed)
        keep = servers.keep if servers.keep is not None else os.environ.get("ROOKERY_KEEP", "").strip().lower() in ("1", "true", "yes")
        if not passed and keep:
            servers.keep_fresh(server, node.nodeid)
        else:
            server.stop()
            servers.fresh.remove(server)
    else:
        server.test_finished(node.nodeid, passed)


@pytest.fixture
def rookery(request):
    """A Rookery server for this test: shared by the tests of the same settings (``@pytest.mark.rookery``), reset before each."""
    yield from _serve(request, False)


@pytest.fixture
def rookery_fresh(request):
    """A Rookery server of this test alone (the marker's settings), stopped after it."""
    yield from _serve(request, True)


def _finding_line(finding):
    where = "session %s" % finding.get("session")
    if finding.get("user"):
        where += " (%s)" % finding["user"]
    command = " ".join(str(part) for part in (finding.get("tag"), finding.get("command")) if part)
    return "  %s %s: %s [%s, %s]: %s" % (where, command, finding.get("rule"), finding.get("severity"),
                                         finding.get("rfc"), finding.get("text"))


def _client_report(server):
    """The client checker's findings of the test on this server, as report text and as data."""
    try:
        findings = server.client_findings()
    except (RookeryError, OSError) as err:
        return "rookery at %s: the client findings could not be read (%s)" % (server.rest_url, err), None
    head = "rookery IMAP %s:%s, REST %s: " % (server.imap_host, server.imap_port, server.rest_url)
    if not findings:
        return head + "no client findings (the client kept to the protocol as far as the checker sees)", findings
    lines = [head + "%d client finding%s (docs/client-check.md)" % (len(findings), "" if len(findings) == 1 else "s")]
    lines += [_finding_line(f) for f in findings]
    return "\n".join(lines), findings


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    item.__dict__.setdefault("_rookery_reports", {})[report.when] = report
    if report.when != "call" or not report.failed:
        return
    for server in item.__dict__.get("_rookery_servers", []):
        if server.ready is None:
            continue
        text, findings = _client_report(server)
        report.sections.append(("rookery client report", text))
        if findings is not None:
            item.user_properties.append(("rookery_client_findings", json.dumps(findings)))
