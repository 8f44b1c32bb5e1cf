/**
 * Issue 21: docs/client-report-card.md stays true. Each real client runs
 * the fixed scenario again, with and without hidden capabilities, and the
 * rule ids the checker reports must be exactly those the card publishes
 * (none, today: well-behaved clients trigger no rule).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLIENTS, HIDDEN_SETS, clientVersion, runScenario, type ScenarioClient } from './scenario.js';

const CARD = fileURLToPath(new URL('../../../docs/client-report-card.md', import.meta.url));

/** The card's result rows: `| client | version | hidden | commands | rules |`, keyed by client and hidden set. */
function cardRows(): Map<string, { version: string; rules: string[] }> {
  const rows = new Map<string, { version: string; rules: string[] }>();
  for (const line of readFileSync(CARD, 'utf8').split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 7 || !(CLIENTS as readonly string[]).includes(cells[1]!)) continue;
    const hidden = cells[3] === 'none' ? '' : cells[3]!.replace(/`/g, '');
    const rules = cells[5] === 'none' ? [] : cells[5]!.replace(/`/g, '').split(',').map((r) => r.trim()).sort();
    rows.set(`${cells[1]} ${hidden}`, { version: cells[2]!, rules });
  }
  return rows;
}

describe('client report card', () => {
  const rows = cardRows();
  for (const hidden of HIDDEN_SETS) {
    for (const client of CLIENTS as readonly ScenarioClient[]) {
      const version = clientVersion(client);
      const skip = version === null && !process.env.CI ? `${client} not installed` : false;
      test(`${client}${hidden.length ? ` with ${hidden.join(', ')} hidden` : ''}: the checker reports what the card says`, { skip, timeout: 60_000 }, async () => {
        const row = rows.get(`${client} ${hidden.join(', ')}`);
        assert.ok(row, `the card has no row for ${client} with hidden: ${hidden.join(', ') || 'none'}`);
        const result = await runScenario(client, hidden);
        const detail = result.findings.map((f) => `${f.tag} ${f.command}: ${f.rule}: ${f.text}`).join('\n');
        assert.deepEqual(result.rules, row.rules, `findings:\n${detail}`);
        // A scenario that ran nothing would prove nothing.
        assert.ok(result.commands.includes('SELECT') && result.commands.includes('LOGOUT'), result.commands.join(' '));
        if (hidden.includes('MOVE')) assert.ok(!result.commands.includes('MOVE'), 'MOVE was hidden');
        if (row.version !== result.version) console.log(`# note: ${client} is ${result.version}, the card was made with ${row.version}`);
      });
    }
  }
});
