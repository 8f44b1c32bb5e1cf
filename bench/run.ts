/** Bench dispatcher: `node build/bench/run.js [lifecycle|mailbox|imap|rest|fuzz|fuzz-rest|abuse|plugins|compress|sync|smtp|sort|wait|script|users ...]`; no name runs all. */
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
};

const args = process.argv.slice(2);
const names = args.filter((a) => a in benches);
const rest = args.filter((a) => !(a in benches));
const unknown = rest.filter((a) => !a.startsWith('-') && !/^\d+$/.test(a) && !a.includes('='));
if (unknown.length) {
  console.error(`unknown bench: ${unknown.join(', ')} (known: ${Object.keys(benches).join(', ')})`);
  process.exit(2);
}
for (const name of names.length ? names : Object.keys(benches)) {
  const mod = await benches[name]!();
  await mod.run(rest);
}
process.exit(0);
