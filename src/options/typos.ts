/**
 * Typo detection for option keys. A key that is not known but is close to a
 * known one (same letters in another case, or a small edit distance) is almost
 * always a mistake, and silently ignoring it makes a fixture do nothing.
 */

/**
 * Damerau-Levenshtein distance (optimal string alignment: insertions,
 * deletions, substitutions and transpositions of adjacent characters).
 * Returns `max + 1` as soon as the distance is known to exceed `max`.
 */
export function editDistance(a: string, b: string, max = Infinity): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0) return m;
  if (m === 0) return n;
  // Three rolling rows: two back (for transpositions), previous, current.
  let back2 = new Array<number>(m + 1).fill(0);
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, back2[j - 2]! + 1);
      }
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    const t = back2;
    back2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[m]!;
}

/**
 * The largest edit distance at which `key` still counts as a typo of `known`:
 * 2 when both are at least 5 characters long, otherwise 1.
 */
export function typoThreshold(key: string, known: string): number {
  return Math.min(key.length, known.length) >= 5 ? 2 : 1;
}

/**
 * The known key that `key` looks like a typo of, or undefined. `key` must not
 * itself be known. A case-insensitive match wins over an edit-distance match;
 * among edit-distance matches the closest (then the first listed) wins.
 */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  for (const k of known) {
    if (k.toLowerCase() === lower) return k;
  }
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const limit = typoThreshold(key, k);
    // Compare case-insensitively so `Mesages` is as close to `messages` as `mesages`.
    const d = editDistance(lower, k.toLowerCase(), limit);
    if (d <= limit && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}
