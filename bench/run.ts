/**
 * Bench dispatcher: `node build/bench/run.js [lifecycle|mailbox|imap|rest|fuzz|fuzz-rest|abuse|plugins|compress|sync|smtp|sort|wait|script|users|scoreboard|faults|fixtures|dashboard|sessions|generator|pop3|pop3-check|oauth|tls|pipeline|mix-cost ...]`.
 * No name runs the scoreboard (every figure of the issue-20 table, in about five minutes); the
 * long ones (fuzz, fuzz-rest, abuse) run only when named.
 */
const benches: Record<string, () => Promise<{ run: (args: string[]) => Promise<void> }>> = {
  lifecycle: () => import('./lifecycle.js'),
  mailbox: () => import('./mailbox.js'),
  imap: () => import('./imap.js'),
  rest: () => import('./rest.js'),
  fuzz: () => import('./fuzz.js'),
  'fuzz-rest': () => import('./fuzz-rest.js'),
  abuse: () => import('./abuse.js'),
  plugins: () => import('./plugins.js'),
  compress: () => import('./compress.js'),
  sync: () => import('./sync.js'),
  smtp: () => import('./smtp.js'),
  sort: () => import('./sort.js'),
  wait: () => import('./wait.js'),
  script: () => import('./script.js'),
  users: () => import('./users.js'),
  scoreboard: () => import('./scoreboard.js'),
  faults: () => import('./faults.js'),
  fixtures: () => import('./fixtures.js'),
  dashboard: () => import('./dashboard.js'),
  sessions: () => import('./sessions.js'),
  generator: () => import('./generator.js'),
  pop3: () => import('./pop3.js'),
  'pop3-check': () => import('./pop3-check.js'),
  oauth: () => import('./oauth.js'),
  tls: () => import('./tls.js'),
  pipeline: () => import('./pipeline.js'),
  'mix-cost': () => import('./mix-cost.js'),
};

const args = process.argv.slice(2);
// `--help` tells what there is rather than starting the whole scoreboard (minutes of work nobody asked for).
if (args.includes('--help') || args.includes('-h')) {
  console.log(`usage: npm run bench -- [name ...] [options]

names: ${Object.keys(benches).join(', ')}
No name runs the scoreboard: every figure with its anchor, then one table (several minutes).
  npm run bench -- scoreboard --only=imap,reset [--quick] [--json out.json]
Each bench's options and what it prints: bench/README.md.`);
  process.exit(0);
}
// Options that take the next word as their value (`--json out.json`, `--count 1000`, `--protocol pop3`).
const VALUED = new Set(['--json', '--count', '--inputs', '--seed', '--connections', '--batch', '--protocol']);
// A value is not a bench name: `fuzz --protocol pop3` runs the fuzz bench only.
const isName = (a: string, i: number): boolean => a in benches && !VALUED.has(args[i - 1] ?? '');
const names = args.filter(isName);
const rest = args.filter((a, i) => !isName(a, i));
const unknown = rest.filter((a, i) => !a.startsWith('-') && !/^\d+$/.test(a) && !a.includes('=') && !VALUED.has(rest[i - 1] ?? ''));
if (unknown.length) {
  console.error(`unknown bench: ${unknown.join(', ')} (known: ${Object.keys(benches).join(', ')})`);
  process.exit(2);
}
// No name: the scoreboard, which runs every figure of issue 20 and ends with one table.
for (const name of names.length ? names : ['scoreboard']) {
  const mod = await benches[name]!();
  await mod.run(rest);
}
process.exit(0);
