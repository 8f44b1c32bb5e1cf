/**
 * The live dashboard's static files, served by the REST listener at `/`
 * and `/dashboard/<file>`. The files are plain HTML, CSS and JavaScript in
 * `src/dashboard/static/`, shipped as they are (package.json `files`): no
 * build step and nothing fetched from elsewhere. The page holds no data of
 * its own; everything it shows comes from the REST API, with the token when
 * one is set, so the files themselves need no token (a browser opening the
 * URL cannot send one).
 */
import { readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ServiceError } from '../errors.js';

/** URL path of the files other than the page itself. */
export const DASHBOARD_PREFIX = '/dashboard/';

/**
 * The files there are, by URL path, with their types. A fixed list, so a
 * request can name nothing else (no `..`, no directory listing).
 */
const FILES: ReadonlyMap<string, { file: string; type: string }> = new Map([
  ['/', { file: 'index.html', type: 'text/html; charset=utf-8' }],
  [`${DASHBOARD_PREFIX}dashboard.js`, { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' }],
  [`${DASHBOARD_PREFIX}mime.js`, { file: 'mime.js', type: 'text/javascript; charset=utf-8' }],
  [`${DASHBOARD_PREFIX}dashboard.css`, { file: 'dashboard.css', type: 'text/css; charset=utf-8' }],
  [`${DASHBOARD_PREFIX}favicon.svg`, { file: 'favicon.svg', type: 'image/svg+xml' }],
]);

/**
 * Only this origin's own files and API, nothing inline, no frames, no
 * forms, no plugins: a message source shown in the page can never run.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** True for the paths the dashboard answers (`/` and everything under `/dashboard/`). */
export function isDashboardPath(pathname: string): boolean {
  return pathname === '/' || pathname.startsWith(DASHBOARD_PREFIX);
}

/** Loaded on the first request, then kept: a few tens of KiB, read once. */
let cache: Map<string, Buffer> | null = null;

/** The names of the files under src/dashboard/static/ that are served, for a build that carries them itself. */
export function dashboardFileNames(): string[] {
  return [...FILES.values()].map((f) => f.file);
}

/**
 * Hands over the files' contents, by file name (`index.html`, ...), so they
 * are never read from disk: the bundle of scripts/sea/ carries them inside
 * itself, where no src/dashboard/static exists. Every name of
 * `dashboardFileNames()` must be there, so a build that forgets one fails at
 * its first start, not at a user's first request.
 */
export function provideDashboardFiles(files: ReadonlyMap<string, string | Uint8Array>): void {
  const out = new Map<string, Buffer>();
  for (const name of dashboardFileNames()) {
    const body = files.get(name);
    if (body === undefined) throw new Error(`the bundled dashboard lacks ${name}`);
    out.set(name, typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body));
  }
  cache = out;
}

/**
 * Where the files are: `src/dashboard/static` of the package, found from
 * this module both when it runs from `dist/dashboard/` (the published
 * package) and from `build/src/dashboard/` (tests), so neither build has to
 * copy them.
 */
function staticDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  // Next to this module (a build that copies them), then the package root
  // two levels up (dist/dashboard) or three (build/src/dashboard); never
  // further, where another project's files could be.
  const candidates = [
    path.join(here, 'static'),
    path.join(here, '..', '..', 'src', 'dashboard', 'static'),
    path.join(here, '..', '..', '..', 'src', 'dashboard', 'static'),
  ];
  for (const candidate of candidates) {
    try {
      if (statSync(path.join(candidate, 'index.html')).isFile()) return candidate;
    } catch {
      // not here; the next place
    }
  }
  throw new ServiceError('SERVERERROR', 'The dashboard files (src/dashboard/static) are missing from the package');
}

function load(): Map<string, Buffer> {
  if (cache) return cache;
  const dir = staticDir();
  const files = new Map<string, Buffer>();
  for (const { file } of FILES.values()) files.set(file, readFileSync(path.join(dir, file)));
  cache = files;
  return files;
}

/**
 * Answers a dashboard request (the REST listener has checked the Host rule
 * already). GET and HEAD only; an unknown file is 404 NOTFOUND like any
 * unknown path. Errors are thrown as ServiceErrors for the caller to answer.
 */
export function serveDashboard(req: IncomingMessage, res: ServerResponse, pathname: string): void {
  const entry = FILES.get(pathname);
  if (!entry) throw new ServiceError('NOTFOUND', `No such endpoint: ${pathname}`);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const e = new ServiceError('METHOD', `${req.method ?? ''} is not allowed on ${pathname}; allowed: GET, HEAD`);
    (e as ServiceError & { allow?: string }).allow = 'GET, HEAD';
    throw e;
  }
  const body = load().get(entry.file)!;
  // The request has no body to wait for; anything sent is dropped.
  req.resume();
  res.writeHead(200, {
    'Content-Type': entry.type,
    'Content-Length': body.length,
    // As every answer of the listener: the files are small, and a new version must show at once.
    'Cache-Control': 'no-store',
    'Content-Security-Policy': DASHBOARD_CSP,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
