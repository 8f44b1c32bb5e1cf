/** Prints the scenario's findings per client as JSON (`node build/test/client-check/run-card.js`); does nothing when imported by the test runner. */
import { CLIENTS, HIDDEN_SETS, runScenario } from './scenario.js';

if (process.env.ROOKERY_CARD === '1') {
  for (const hidden of HIDDEN_SETS) {
    for (const client of CLIENTS) {
      try {
        const r = await runScenario(client, hidden);
        console.log(JSON.stringify({ client, version: r.version, hidden, rules: r.rules, commands: [...new Set(r.commands)].join(' '), findings: r.findings.map((f) => `${f.tag} ${f.command} ${f.rule}: ${f.text}`) }));
      } catch (err) {
        console.log(JSON.stringify({ client, hidden, error: (err as Error).message }));
      }
    }
  }
}
