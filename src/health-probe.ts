/**
 * `rookery health`: one GET /v1/health of a running server, for a
 * container's HEALTHCHECK (a slim image has no curl, and the single
 * executable can run no other script) and for scripts that wait for a
 * server. Exit 0 when it answers 200 with `ok: true`, 1 otherwise.
 */

export interface HealthProbe {
  /** The REST base URL (`http://127.0.0.1:8025/v1`). */
  url: string;
  token: string | null;
  timeoutMs: number;
}

export type HealthResult = { ok: true; version: string } | { ok: false; reason: string };

/**
 * The base URL for a REST host and port as the server is told them: an
 * unspecified address (0.0.0.0, ::, as in a container) is reached on
 * loopback, which a token-less server also insists on.
 */
export function healthUrl(host: string | undefined, port: number): string {
  const h = host === undefined || host === '' || host === '0.0.0.0' ? '127.0.0.1' : host === '::' || host === '[::]' ? '::1' : host;
  return `http://${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}/v1`;
}

export async function probeHealth(probe: HealthProbe): Promise<HealthResult> {
  const base = probe.url.replace(/\/+$/, '');
  const target = `${base.endsWith('/v1') ? base : `${base}/v1`}/health`;
  let response: Response;
  try {
    response = await fetch(target, {
      headers: probe.token === null ? {} : { authorization: `Bearer ${probe.token}` },
      signal: AbortSignal.timeout(probe.timeoutMs),
    });
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    return { ok: false, reason: `cannot reach ${target}: ${cause}` };
  }
  const text = await response.text().catch(() => '');
  if (response.status !== 200) return { ok: false, reason: `GET ${target} answered ${response.status}: ${text.slice(0, 300)}` };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { ok: false, reason: `GET ${target} answered 200 with no JSON: ${text.slice(0, 300)}` };
  }
  const { ok, version } = (typeof body === 'object' && body !== null ? body : {}) as { ok?: unknown; version?: unknown };
  if (ok !== true) return { ok: false, reason: `GET ${target} answered 200 without "ok": true` };
  return { ok: true, version: typeof version === 'string' ? version : '?' };
}
