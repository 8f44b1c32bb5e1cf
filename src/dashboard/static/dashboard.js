// The Rookery dashboard: a view of the server through its REST API. It
// loads each resource once, then changes only when the event stream
// (GET /v1/events, read with fetch so the token can go in a header) says
// something happened. No polling, no framework; all text goes in through
// textContent, never as HTML.
import { decodeBytes, decodeWords, header, parseHeaders, splitPart, structure } from './mime.js';

const $ = (id) => document.getElementById(id);

/** The REST token when the server wants one; this tab only (sessionStorage), never in a URL. */
let token = sessionStorage.getItem('rookery-token');

/** Rows kept in the event list, and closed sessions kept in the sessions table. */
const MAX_EVENT_ROWS = 300;
const MAX_CLOSED_SESSIONS = 20;
/** Messages whose headers are read for the list (the newest ones). */
const MAX_LISTED = 200;
/** Source bytes read at once for the list's From and Subject (and the largest message read for them). */
const MAX_SUMMARY_SOURCE = 4 * 1024 * 1024;
/** Characters of a source shown in the raw view. */
const MAX_RAW_SHOWN = 2 * 1024 * 1024;

const state = {
  mailboxes: [],
  selectedMailbox: null,
  selectedUid: null,
  /** Session number → { info, closed, waiting } (waiting: the command a session waits in, such as IDLE) */
  sessions: new Map(),
  selectedSession: null,
  /** Whether the server has GET /v1/sessions/{n}/transcript (from its OpenAPI document). */
  transcripts: false,
  eventTypes: [],
  /** Session numbers seen in events, for the session filter. */
  eventSessions: new Set(),
  /** Session number → its client-checker findings (newest last, at most MAX_FINDINGS_SHOWN each). */
  findings: new Map(),
};

/** Findings kept per session in the page. */
const MAX_FINDINGS_SHOWN = 200;

// ------------------------------------------------------------------ REST

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(method, path, body, accept = 'application/json') {
  const headers = { Accept: accept };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, cache: 'no-store' };
  // A POST needs the JSON type even without a body (the spec).
  if (body !== undefined || method === 'POST') {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(path, init);
  if (res.status === 401) {
    askToken(token ? 'That token was refused.' : '');
    throw new ApiError(401, 'UNAUTHORIZED', 'The REST token is missing or wrong');
  }
  const type = res.headers.get('Content-Type') ?? '';
  const data = type.startsWith('application/json') ? await res.json() : await res.text();
  if (!res.ok) {
    const e = data && typeof data === 'object' && data.error ? data.error : { code: String(res.status), message: String(data) };
    throw new ApiError(res.status, e.code, e.message);
  }
  return data;
}

const enc = (s) => encodeURIComponent(s);

function showError(err) {
  if (err instanceof ApiError && err.status === 401) return;
  const box = $('error');
  box.textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err && err.message ? err.message : err);
  box.hidden = false;
  clearTimeout(showError.timer);
  showError.timer = setTimeout(() => (box.hidden = true), 8000);
}

// ------------------------------------------------------------------ token

let tokenWaiters = [];

function askToken(message) {
  $('token-error').textContent = message;
  $('token-panel').hidden = false;
  $('token-input').focus();
}

function tokenGiven() {
  return new Promise((resolve) => tokenWaiters.push(resolve));
}

$('token-submit').addEventListener('click', submitToken);
$('token-input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter') submitToken();
});

function submitToken() {
  const value = $('token-input').value.trim();
  if (value === '') return;
  token = value;
  sessionStorage.setItem('rookery-token', value);
  $('token-input').value = '';
  $('token-panel').hidden = true;
  const waiters = tokenWaiters;
  tokenWaiters = [];
  for (const w of waiters) w();
}

// ------------------------------------------------------------------ helpers

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(node.dataset, v);
    else node.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

function flagBadge(flag) {
  const cls = { '\\Seen': 'seen', '\\Flagged': 'flagged', '\\Deleted': 'deleted' }[flag] ?? '';
  return el('span', { class: `flag ${cls}`, text: flag });
}

function formatSize(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** Calls `fn` once after a burst of calls (events often come in groups). */
function debounce(fn, ms = 25) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      fn().catch(showError);
    }, ms);
  };
}

// Rows and tree entries that act on a click take the keyboard too.
document.addEventListener('keydown', (e) => {
  const target = e.target;
  if ((e.key === 'Enter' || e.key === ' ') && target instanceof HTMLElement && target.matches('tr.clickable, #mailboxes li')) {
    e.preventDefault();
    target.click();
  }
});

// ------------------------------------------------------------------ mailboxes

async function loadMailboxes() {
  state.mailboxes = await api('GET', '/v1/mailboxes');
  if (state.selectedMailbox !== null && !state.mailboxes.some((m) => m.path === state.selectedMailbox)) {
    state.selectedMailbox = null;
    state.selectedUid = null;
    showMessages([]);
    clearMessage();
  }
  if (state.selectedMailbox === null && state.mailboxes.some((m) => m.path === 'INBOX')) {
    state.selectedMailbox = 'INBOX';
    await loadMessages();
  }
  renderMailboxes();
}

/** Modified UTF-7 (RFC 3501 section 5.1.3) to text, for display. */
function fromUtf7(name) {
  return name.replace(/&([^-]*)-/g, (word, b64) => {
    if (b64 === '') return '&';
    try {
      const bin = atob(b64.replace(/,/g, '/'));
      let out = '';
      for (let i = 0; i + 1 < bin.length; i += 2) out += String.fromCharCode((bin.charCodeAt(i) << 8) | bin.charCodeAt(i + 1));
      return out;
    } catch {
      // Not valid modified UTF-7 (a name made over REST may be anything): shown as stored.
      return word;
    }
  });
}

function renderMailboxes() {
  const list = $('mailboxes');
  list.replaceChildren();
  for (const m of state.mailboxes) {
    const parts = m.path.split(m.delimiter || '/');
    const li = el(
      'li',
      { dataset: { path: m.path }, title: `${m.path}${m.specialUse.length ? ' ' + m.specialUse.join(' ') : ''}` },
      el('span', { class: 'name', text: fromUtf7(parts[parts.length - 1]) }),
      m.specialUse.length ? el('span', { class: 'badge', text: m.specialUse[0].replace('\\', '') }) : null,
      m.selectable
        ? el('span', { class: 'count', title: 'unseen/messages' }, m.unseen > 0 ? el('span', { class: 'unseen', text: `${m.unseen}/` }) : '', `${m.messages}`)
        : null,
    );
    li.style.paddingLeft = `${4 + 14 * (parts.length - 1)}px`;
    if (!m.selectable) li.classList.add('noselect');
    if (m.path === state.selectedMailbox) li.classList.add('selected');
    if (m.selectable) {
      li.tabIndex = 0;
      li.addEventListener('click', () => {
        state.selectedMailbox = m.path;
        state.selectedUid = null;
        clearMessage();
        renderMailboxes();
        loadMessages().catch(showError);
      });
    }
    list.append(li);
  }
}

// ------------------------------------------------------------------ messages

/** UID → { from, subject } of messages already read, per mailbox (sources do not change). */
const summaries = new Map();

async function loadMessages() {
  const path = state.selectedMailbox;
  if (path === null) return;
  const infos = await api('GET', `/v1/mailboxes/${enc(path)}/messages`);
  if (path !== state.selectedMailbox) return;
  // UIDVALIDITY in the key: after a UID reset the same UID is another message.
  const validity = state.mailboxes.find((m) => m.path === path)?.uidvalidity ?? 0;
  const key = (uid) => `${path}\u0000${validity}\u0000${uid}`;
  const shown = infos.slice(-MAX_LISTED);
  const missing = shown.filter((m) => !summaries.has(key(m.uid)));
  // The API has no headers-only read, so sources come whole: in batches of a
  // few MiB, and the header fields of very large messages are not read for the list.
  for (const m of missing) if (m.size > MAX_SUMMARY_SOURCE) summaries.set(key(m.uid), { from: '', subject: `(not read for the list: ${formatSize(m.size)})` });
  const batches = [];
  let batch = [];
  let bytes = 0;
  for (const m of missing) {
    if (m.size > MAX_SUMMARY_SOURCE) continue;
    if (batch.length > 0 && bytes + m.size > MAX_SUMMARY_SOURCE) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(m.uid);
    bytes += m.size;
  }
  if (batch.length > 0) batches.push(batch);
  for (const uids of batches) {
    const full = await api('GET', `/v1/mailboxes/${enc(path)}/messages?raw=true&uids=${uids.join(',')}`);
    for (const m of full) {
      const head = splitPart(atob(m.raw).slice(0, 64 * 1024)).head;
      const fields = parseHeaders(head);
      summaries.set(key(m.uid), { from: decodeWords(header(fields, 'From')), subject: decodeWords(header(fields, 'Subject')) });
    }
  }
  if (missing.length > 0) {
    // Bounded: only the summaries of what is listed now are worth keeping.
    if (summaries.size > 4 * MAX_LISTED) {
      const keep = new Set(shown.map((m) => key(m.uid)));
      for (const k of summaries.keys()) if (!keep.has(k)) summaries.delete(k);
    }
  }
  if (path !== state.selectedMailbox) return;
  $('messages-note').textContent = infos.length > shown.length ? `The newest ${shown.length} of ${infos.length} messages.` : '';
  showMessages(shown.map((m) => ({ ...m, ...(summaries.get(key(m.uid)) ?? { from: '', subject: '' }) })));
  if (state.selectedUid !== null && !infos.some((m) => m.uid === state.selectedUid)) {
    state.selectedUid = null;
    clearMessage();
  }
}

function showMessages(messages) {
  $('messages-title').textContent = state.selectedMailbox === null ? '' : fromUtf7(state.selectedMailbox);
  const body = $('messages').tBodies[0];
  body.replaceChildren();
  for (const m of [...messages].reverse()) {
    const tr = el(
      'tr',
      { class: 'clickable', tabindex: '0', dataset: { uid: String(m.uid) } },
      el('td', { class: 'num', text: String(m.uid) }),
      el('td', {}, ...m.flags.map(flagBadge)),
      el('td', { class: 'ellipsis', text: m.from }),
      el('td', { class: 'ellipsis subject', text: m.subject || '(no subject)' }),
      el('td', { class: 'nowrap', text: m.internaldate.replace(/:\d\d [+-]\d{4}$/, ''), title: m.internaldate }),
      el('td', { class: 'num', text: formatSize(m.size) }),
    );
    if (!m.flags.includes('\\Seen')) tr.classList.add('unseen');
    if (m.uid === state.selectedUid) tr.classList.add('selected');
    tr.addEventListener('click', () => {
      state.selectedUid = m.uid;
      for (const row of body.rows) row.classList.toggle('selected', row === tr);
      loadMessage().catch(showError);
    });
    body.append(tr);
  }
}

function clearMessage() {
  $('message-title').textContent = '';
  $('message-headers').tBodies[0].replaceChildren();
  $('message-structure').replaceChildren();
  $('message-raw').textContent = '';
}

async function loadMessage() {
  const path = state.selectedMailbox;
  const uid = state.selectedUid;
  if (path === null || uid === null) return;
  const m = await api('GET', `/v1/mailboxes/${enc(path)}/messages/${uid}`);
  if (path !== state.selectedMailbox || uid !== state.selectedUid) return;
  const binary = atob(m.raw);
  $('message-title').textContent = `UID ${m.uid} · ${formatSize(m.size)} · modseq ${m.modseq}`;
  const rows = parseHeaders(splitPart(binary).head).map((f) =>
    el('tr', {}, el('th', { text: f.name }), el('td', { text: decodeWords(f.value) })),
  );
  $('message-headers').tBodies[0].replaceChildren(...rows);
  const tree = $('message-structure');
  tree.replaceChildren();
  const walk = (node, depth, label) => {
    const details = [node.type];
    const charset = node.params.get('charset');
    if (charset) details.push(`charset=${charset}`);
    details.push(node.encoding);
    if (node.disposition) details.push(node.disposition);
    if (node.filename) details.push(`"${node.filename}"`);
    details.push(formatSize(node.size));
    const li = el('li', { class: 'mime-part' }, el('span', { class: 'muted', text: label }), el('span', { text: details.join(' · ') }));
    li.style.paddingLeft = `${4 + 18 * depth}px`;
    tree.append(li);
    node.children.forEach((c, i) => walk(c, depth + 1, label === 'message' ? `${i + 1}` : `${label}.${i + 1}`));
  };
  walk(structure(binary), 0, 'message');
  const shown = binary.length > MAX_RAW_SHOWN ? binary.slice(0, MAX_RAW_SHOWN) : binary;
  $('message-raw').textContent = decodeBytes(shown) + (shown === binary ? '' : `\n\n[... ${formatSize(binary.length - shown.length)} more]`);
}

for (const button of $('message-tabs').querySelectorAll('button')) {
  button.addEventListener('click', () => {
    for (const b of $('message-tabs').querySelectorAll('button')) b.classList.toggle('active', b === button);
    for (const body of document.querySelectorAll('.tab-body')) body.hidden = body.dataset.tab !== button.dataset.tab;
  });
}

// ------------------------------------------------------------------ sessions

/**
 * One set per GET /v1/sessions under way: the sessions whose `close` event
 * came meanwhile. The list may have been made before they closed (a reset
 * says BYE to all, then the page reloads), and must not reopen them.
 */
const sessionLoads = new Set();

async function loadSessions() {
  const closedMeanwhile = new Set();
  sessionLoads.add(closedMeanwhile);
  let list;
  try {
    list = await api('GET', '/v1/sessions');
  } finally {
    sessionLoads.delete(closedMeanwhile);
  }
  const open = new Set(list.map((s) => s.session));
  for (const [n, s] of state.sessions) if (!open.has(n)) s.closed = true;
  for (const info of list) if (!closedMeanwhile.has(info.session)) state.sessions.set(info.session, { info, closed: false });
  trimClosed();
  renderSessions();
}

function trimClosed() {
  const closed = [...state.sessions.entries()].filter(([, s]) => s.closed);
  for (const [n] of closed.slice(0, Math.max(0, closed.length - MAX_CLOSED_SESSIONS))) state.sessions.delete(n);
}

function sessionEvent(data) {
  const info = data.session;
  // `waiting` (IDLE, NOTIFY, ...) lasts until the session's next event.
  state.sessions.set(info.session, { info, closed: data.type === 'close', waiting: data.type === 'waiting' ? data.command ?? 'waiting' : null });
  if (data.type === 'close') {
    for (const closedMeanwhile of sessionLoads) closedMeanwhile.add(info.session);
    trimClosed();
  }
  renderSessions();
  if (state.selectedSession === info.session) refreshTranscript();
}

function renderSessions() {
  const body = $('sessions').tBodies[0];
  body.replaceChildren();
  const sorted = [...state.sessions.values()].sort((a, b) => b.info.session - a.info.session);
  for (const { info, closed, waiting } of sorted) {
    const disconnect = closed
      ? el('span', { class: 'muted', text: 'closed' })
      : el('button', {
          class: 'small danger',
          type: 'button',
          text: 'Disconnect',
          title: `DELETE /v1/sessions/${info.session}: BYE and close`,
          onclick: (e) => {
            e.stopPropagation();
            api('DELETE', `/v1/sessions/${info.session}`).catch(showError);
          },
        });
    const tr = el(
      'tr',
      { class: 'clickable', tabindex: '0', dataset: { session: String(info.session) }, title: 'Show the transcript' },
      el('td', { class: 'num', text: String(info.session) }),
      el('td', { text: (info.protocol ?? 'imap').toUpperCase() }),
      el('td', { text: info.user ?? '—' }),
      el('td', {}, el('span', { class: `state state-${info.state.replace(/ /g, '-')}`, text: info.state }), info.readOnly && info.mailbox ? ' (read-only)' : '', waiting ? el('span', { class: 'badge', text: waiting }) : null),
      el('td', { text: info.mailbox === null ? '—' : fromUtf7(info.mailbox) }),
      el('td', { class: 'nowrap', text: `${info.remoteAddress ?? ''}${info.secure ? ' TLS' : ''}${info.compressed ? ' DEFLATE' : ''}` }),
      el('td', { class: 'num' }, findingsBadge(info.session)),
      el('td', {}, disconnect),
    );
    if (closed) tr.classList.add('closed');
    if (info.session === state.selectedSession) tr.classList.add('selected');
    tr.addEventListener('click', () => {
      state.selectedSession = info.session;
      renderSessions();
      refreshTranscript();
    });
    body.append(tr);
  }
}

function findingsBadge(session) {
  const list = state.findings.get(session);
  if (!list || list.length === 0) return null;
  return el('span', { class: 'badge warn findings-count', text: String(list.length), title: `${list.length} client-checker finding${list.length === 1 ? '' : 's'}` });
}

/** The client-checker findings of the selected session, under its transcript. */
function renderFindings() {
  const n = state.selectedSession;
  const list = n === null ? [] : state.findings.get(n) ?? [];
  const box = $('findings');
  box.replaceChildren(
    ...list.map((f) =>
      el(
        'li',
        { class: `finding severity-${f.severity}` },
        el('span', { class: 'badge', text: f.rule }),
        el('span', { text: `${f.tag ? f.tag + ' ' : ''}${f.command ?? ''}${f.tag || f.command ? ': ' : ''}${f.text}` }),
        el('span', { class: 'muted', text: f.rfc }),
      ),
    ),
  );
  $('findings-title').hidden = list.length === 0;
}

function addFinding(f) {
  let list = state.findings.get(f.session);
  if (!list) state.findings.set(f.session, (list = []));
  if (list.some((g) => g.id === f.id)) return;
  list.push(f);
  if (list.length > MAX_FINDINGS_SHOWN) list.shift();
}

async function loadFindings() {
  let list;
  try {
    list = await api('GET', '/v1/client/findings');
  } catch (err) {
    // A server without the route (or the checker off): nothing to show.
    if (err instanceof ApiError && (err.code === 'NOTFOUND' || err.code === 'CANNOT')) return;
    throw err;
  }
  state.findings.clear();
  for (const f of Array.isArray(list) ? list : list.findings ?? []) addFinding(f);
  renderSessions();
  renderFindings();
}

/** A transcript line the server answered with NO or BAD (tagged), or an untagged BAD or BYE. */
function transcriptLineClass(line) {
  const m = /^\d+ S: (\S+) (OK|NO|BAD|BYE)\b/.exec(line);
  if (!m) return '';
  if (m[1] === '*') return m[2] === 'BAD' ? 'line-bad' : m[2] === 'BYE' ? 'line-bye' : '';
  return m[2] === 'NO' ? 'line-no' : m[2] === 'BAD' ? 'line-bad' : '';
}

function renderTranscript(text) {
  const pre = $('transcript');
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.replaceChildren(
    ...text.split('\n').map((line, i, all) => {
      const cls = transcriptLineClass(line);
      const node = cls ? el('span', { class: cls, text: line }) : document.createTextNode(line);
      return i < all.length - 1 ? [node, document.createTextNode('\n')] : [node];
    }).flat(),
  );
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}

function enlargeTranscript(big) {
  $('transcript-box').classList.toggle('enlarged', big);
  $('transcript-enlarge').textContent = big ? 'Shrink' : 'Enlarge';
}
$('transcript-enlarge').addEventListener('click', () => enlargeTranscript(!$('transcript-box').classList.contains('enlarged')));
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && $('transcript-box').classList.contains('enlarged')) enlargeTranscript(false);
});

$('transcript-copy').addEventListener('click', async () => {
  const text = $('transcript').textContent ?? '';
  const note = $('transcript-copied');
  try {
    await navigator.clipboard.writeText(text);
    note.textContent = 'Copied';
  } catch {
    // No clipboard access (an insecure origin, a denied permission): select the text for Ctrl-C instead.
    const range = document.createRange();
    range.selectNodeContents($('transcript'));
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    note.textContent = 'Selected: press Ctrl-C';
  }
  clearTimeout(note.timer);
  note.timer = setTimeout(() => (note.textContent = ''), 3000);
});

/** The session's transcript, where the server has them (GET /v1/sessions/{n}/transcript). */
const refreshTranscript = debounce(async () => {
  const n = state.selectedSession;
  if (n === null) return;
  const box = $('transcript-box');
  box.hidden = false;
  $('transcript-title').textContent = `session ${n}`;
  renderFindings();
  if (!state.transcripts) {
    $('transcript').textContent = 'This server keeps no transcripts.';
    return;
  }
  try {
    const text = await api('GET', `/v1/sessions/${n}/transcript`, undefined, 'text/plain');
    if (n !== state.selectedSession) return;
    renderTranscript(typeof text === 'string' ? text : JSON.stringify(text, null, 2));
  } catch (err) {
    if (err instanceof ApiError && err.code === 'NOTFOUND') {
      state.transcripts = false;
      $('transcript').textContent = 'This server keeps no transcripts.';
    } else if (err instanceof ApiError && err.status !== 401) {
      // No such session any more, or transcripts are off (CANNOT): the server's words say which.
      $('transcript').textContent = `${err.code}: ${err.message}`;
    } else throw err;
  }
}, 100);

// ------------------------------------------------------------------ script rules

async function loadRules() {
  const rules = await api('GET', '/v1/script/rules');
  $('rules').replaceChildren(
    ...rules.map((r) =>
      el(
        'li',
        { dataset: { id: String(r.id) } },
        el('span', { class: 'badge', text: `#${r.id}` }),
        el('code', { text: JSON.stringify(r.rule) }),
        el('span', { class: 'count', text: `${r.hits}/${r.matched}`, title: 'acted / matched' }),
        el('button', {
          class: 'small danger',
          type: 'button',
          text: 'Remove',
          onclick: () => api('DELETE', `/v1/script/rules/${r.id}`).then(loadRules).catch(showError),
        }),
      ),
    ),
  );
  if (rules.length === 0) $('rules').append(el('li', { class: 'muted', text: 'No rules.' }));
}

$('rule-add').addEventListener('click', async () => {
  $('rule-error').textContent = '';
  let rule;
  try {
    rule = JSON.parse($('rule-input').value);
  } catch (err) {
    $('rule-error').textContent = `Not JSON: ${err.message}`;
    return;
  }
  try {
    await api('POST', '/v1/script/rules', rule);
    await loadRules();
  } catch (err) {
    $('rule-error').textContent = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
  }
});

$('rules-clear').addEventListener('click', () => api('DELETE', '/v1/script/rules').then(loadRules).catch(showError));

$('reset').addEventListener('click', () => api('POST', '/v1/reset').catch(showError));

// ------------------------------------------------------------------ events

const refreshMailboxes = debounce(loadMailboxes);
const refreshMessages = debounce(loadMessages);
const refreshRules = debounce(loadRules, 200);
const refreshAll = debounce(() => Promise.all([loadMailboxes(), loadMessages(), loadSessions(), loadRules(), loadFindings()]));

/** IMAP commands after which flags or messages may have changed (a client's changes have no event of their own). */
const CHANGING = /^(?:UID )?(?:STORE|FETCH|EXPUNGE|CLOSE|MOVE|COPY)$|^(?:APPEND|SELECT|EXAMINE|UNSELECT|SETQUOTA|RENAME|DELETE|CREATE|SUBSCRIBE|UNSUBSCRIBE)$/i;

function onEvent(type, data) {
  addEventRow(type, data);
  switch (type) {
    case 'session':
      sessionEvent(data);
      break;
    case 'command':
      if (data.status === 'OK' && CHANGING.test(data.command)) {
        refreshMailboxes();
        refreshMessages();
      }
      if (data.session === state.selectedSession) refreshTranscript();
      break;
    case 'mailbox':
      refreshMailboxes();
      break;
    case 'append':
    case 'expunge':
    case 'flags':
      refreshMailboxes();
      if (data.path === state.selectedMailbox) refreshMessages();
      break;
    case 'script':
      refreshRules();
      if (data.session !== null && data.session === state.selectedSession) refreshTranscript();
      break;
    case 'client':
      addFinding(data);
      renderSessions();
      if (data.session === state.selectedSession) renderFindings();
      break;
    case 'reset':
    case 'gap':
      summaries.clear();
      refreshAll();
      break;
    default:
      break;
  }
}

function summarize(type, data) {
  switch (type) {
    case 'session':
      return `#${data.session.session} ${data.type}${data.session.user ? ' ' + data.session.user : ''}${data.session.mailbox && data.type === 'select' ? ' ' + data.session.mailbox : ''}${data.command ? ' ' + data.command : ''}`;
    case 'command':
      return `#${data.session} ${data.tag} ${data.command} ${data.status}`;
    case 'append':
    case 'expunge':
      return `${data.path} uids ${data.uids.join(',')}`;
    case 'flags':
      return `${data.path} ${data.messages.map((m) => `${m.uid}: ${m.flags.join(' ') || '()'}`).join('; ')}`;
    case 'mailbox':
      return `${data.type} ${data.path}${data.oldPath ? ' (was ' + data.oldPath + ')' : ''}`;
    case 'script':
      // The spec: a command a rule answered has this event and no command event.
      if (data.event === 'command' && data.command) return `#${data.session} ${data.tag ?? ''} ${data.command} answered by a script rule: ${ruleSummary(data.rule)}`;
      return `${data.session !== null ? `#${data.session} ` : ''}script rule acted on ${data.event}${data.command ? ' ' + data.command : ''}: ${ruleSummary(data.rule)}`;
    case 'client':
      return `#${data.session} ${data.rule}: ${data.tag ? data.tag + ' ' : ''}${data.command ? data.command + ': ' : ''}${data.text}`;
    case 'mark':
      return markText(data);
    case 'oauth':
      return oauthText(data);
    default:
      return JSON.stringify(data);
  }
}

const eventLog = [];

function ruleSummary(rule) {
  const text = JSON.stringify(rule ?? {});
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

/** An oauth event in words: `issued authorization_code testclient -> testuser (grant 3)`. */
function oauthText(data) {
  const who = [data.client, data.user].filter((x) => x !== null && x !== undefined).join(' -> ');
  const where = data.session !== null && data.session !== undefined ? `#${data.session} ` : '';
  return `${where}${data.type} ${data.via}${who ? ' ' + who : ''}${data.grant !== null && data.grant !== undefined ? ` (grant ${data.grant})` : ''}${data.reason ? ': ' + data.reason : ''}`;
}

function markText(data) {
  if (data.phase === 'start') return `test: ${data.text}`;
  if (data.phase === 'end') return `end of test: ${data.text}${data.outcome ? ` (${data.outcome === 'fail' ? 'FAILED' : 'passed'})` : ''}`;
  return data.text;
}

/** The session an event belongs to, or null (store changes, resets, marks). */
function eventSession(type, data) {
  if (!data || typeof data !== 'object') return null;
  if (type === 'session') return data.session?.session ?? null;
  return typeof data.session === 'number' ? data.session : null;
}

/** Local time with milliseconds: events of one command come within the same second. */
function clockTime(date) {
  const two = (n) => String(n).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, '0')}`;
}

function eventShown(row) {
  // Test boundaries stay whatever the filter: they are what the rest is read against.
  if (row.dataset.type === 'mark') return true;
  const type = $('event-filter').value;
  const session = $('event-session').value;
  return (type === '' || type === row.dataset.type) && (session === '' || session === row.dataset.session);
}

function addEventRow(type, data) {
  if (!state.eventTypes.includes(type)) {
    state.eventTypes.push(type);
    $('event-filter').append(el('option', { value: type, text: type }));
  }
  const session = eventSession(type, data);
  if (session !== null && !state.eventSessions.has(session)) {
    state.eventSessions.add(session);
    $('event-session').append(el('option', { value: String(session), text: `session ${session}` }));
  }
  const classes = ['fresh'];
  if (type === 'command' && (data.status === 'NO' || data.status === 'BAD')) classes.push(`status-${data.status.toLowerCase()}`);
  if (type === 'script') classes.push('scripted');
  if (type === 'client') classes.push('finding-row');
  if (type === 'oauth' && (data.type === 'rejected' || data.type === 'revoked' || data.type === 'expired')) classes.push('oauth-end');
  let row;
  if (type === 'mark') {
    classes.push('mark', data.phase ? `mark-${data.phase}` : 'mark-note');
    if (data.outcome) classes.push(`mark-${data.outcome}`);
    row = el(
      'tr',
      { class: classes.join(' '), dataset: { type } },
      el('td', { class: 'nowrap muted', text: clockTime(new Date()) }),
      el('td', { colspan: '2', class: 'mark-text', text: markText(data) }),
    );
  } else {
    row = el(
      'tr',
      { class: classes.join(' '), dataset: { type, session: session === null ? '' : String(session) } },
      el('td', { class: 'nowrap muted', text: clockTime(new Date()) }),
      el('td', {}, el('span', { class: 'badge', text: type })),
      el('td', { class: 'data', text: summarize(type, data), title: 'Click for the whole event' }),
    );
    // Click: the event's data in full, and back.
    let open = false;
    row.addEventListener('click', () => {
      open = !open;
      row.cells[2].textContent = open ? JSON.stringify(data, null, 2) : summarize(type, data);
      row.classList.toggle('open', open);
    });
  }
  row.hidden = !eventShown(row);
  $('events').tBodies[0].prepend(row);
  eventLog.push(row);
  if (eventLog.length > MAX_EVENT_ROWS) eventLog.shift().remove();
}

function applyEventFilter() {
  for (const row of eventLog) row.hidden = !eventShown(row);
}
$('event-filter').addEventListener('change', applyEventFilter);
$('event-session').addEventListener('change', applyEventFilter);
$('events-clear').addEventListener('click', () => {
  for (const row of eventLog) row.remove();
  eventLog.length = 0;
});

/**
 * Reads the SSE stream with fetch (EventSource cannot send the token
 * header) and parses it as the HTML standard says: lines ending in CR, LF
 * or CRLF; `event`, `data` and `id` fields; an empty line ends an event.
 * Reconnects with Last-Event-ID, so the server replays what was missed.
 */
async function streamEvents(from, connected) {
  let lastId = from;
  for (;;) {
    const live = $('live');
    try {
      const headers = { Accept: 'text/event-stream' };
      if (token) headers.Authorization = `Bearer ${token}`;
      headers['Last-Event-ID'] = lastId;
      const res = await fetch('/v1/events', { headers, cache: 'no-store' });
      if (res.status === 401) {
        askToken(token ? 'That token was refused.' : '');
        await tokenGiven();
        continue;
      }
      if (!res.ok || !res.body) throw new Error(`event stream: HTTP ${res.status}`);
      live.textContent = 'live';
      live.className = 'badge on';
      connected();
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      let type = '';
      let data = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        // A CR at the very end may be half of a CRLF: wait for the next chunk.
        const lines = buffer.split(/\r\n|\r(?!$)|\n/);
        buffer = lines.pop();
        for (const line of lines) {
          if (line === '') {
            if (data.length > 0) {
              let parsed = null;
              try {
                parsed = JSON.parse(data.join('\n'));
              } catch {
                parsed = data.join('\n');
              }
              try {
                onEvent(type || 'message', parsed);
              } catch (err) {
                showError(err);
              }
            }
            type = '';
            data = [];
            continue;
          }
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let v = colon < 0 ? '' : line.slice(colon + 1);
          if (v.startsWith(' ')) v = v.slice(1);
          if (field === 'event') type = v;
          else if (field === 'data') data.push(v);
          else if (field === 'id' && !v.includes('\0')) lastId = v;
        }
      }
    } catch (err) {
      // A network error ends the stream like the server closing it: reconnect below.
      console.warn(err);
    }
    live.textContent = 'reconnecting';
    live.className = 'badge off';
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// ------------------------------------------------------------------ start

async function start() {
  let health;
  for (;;) {
    try {
      health = await api('GET', '/v1/health');
      break;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) await tokenGiven();
      else throw err;
    }
  }
  $('server-info').textContent = `${health.version} · IMAP ${health.imap.host}:${health.imap.port}${health.imap.secure ? ' (TLS)' : ''}`;
  // The stream starts from the newest event before the lists load, so what
  // happens meanwhile is replayed to it rather than missed.
  // Transcripts exist where the server describes the route (no request that is sure to fail).
  const openapi = await api('GET', '/v1/openapi.json');
  state.transcripts = Object.hasOwn(openapi.paths ?? {}, '/v1/sessions/{session}/transcript');
  const { id } = await api('GET', '/v1/events/latest');
  await new Promise((resolve) => void streamEvents(String(id), resolve));
  await Promise.all([loadMailboxes(), loadSessions(), loadRules(), loadFindings()]);
  document.body.dataset.ready = 'true';
}

start().catch(showError);
