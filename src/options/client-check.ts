/**
 * The client checker's options: `clientCheck` (mode), `clientCheckRules`
 * (rules on or off by id) and `capabilities` (`{ hide: [...] }`, also per
 * user). Validated here so resolve.ts only calls in.
 */
import { CLIENT_CHECK_MODES, CLIENT_RULE_IDS, CLIENT_RULES, type ClientCheckMode } from '../client-check/rules.js';
import { checkTypos, childPath, isPlainObject, type Problems } from './problems.js';
import { suggestKey } from './typos.js';

export interface ResolvedClientCheck {
  mode: ClientCheckMode;
  /** Ids of the rules checked. */
  rules: ReadonlySet<string>;
}

const CAPABILITIES_KEYS = ['hide'] as const;
const CAPABILITIES_SET = new Set<string>(CAPABILITIES_KEYS);

/** A capability name: an atom (RFC 3501 §9 `capability`), compared case-insensitively. */
const CAPABILITY = /^[^\x00-\x20\x7f(){%*"\\\]]+$/;

export function resolveClientCheck(problems: Problems, mode: unknown, rules: unknown): ResolvedClientCheck {
  let resolved: ClientCheckMode = 'report';
  if (mode !== undefined) {
    if (typeof mode === 'string' && (CLIENT_CHECK_MODES as readonly string[]).includes(mode)) resolved = mode as ClientCheckMode;
    else {
      const hint = typeof mode === 'string' ? suggestKey(mode, CLIENT_CHECK_MODES) : undefined;
      problems.expected('clientCheck', `one of ${CLIENT_CHECK_MODES.map((m) => `"${m}"`).join(', ')}${hint ? ` (did you mean "${hint}"?)` : ''}`, mode);
    }
  }
  const on = new Set(CLIENT_RULES.filter((r) => r.byDefault).map((r) => r.id));
  if (rules !== undefined) {
    if (!isPlainObject(rules)) problems.expected('clientCheckRules', 'an object of rule ids to true or false', rules);
    else {
      for (const [id, value] of Object.entries(rules)) {
        const path = childPath('clientCheckRules', id);
        if (!CLIENT_RULE_IDS.includes(id)) {
          const hint = suggestKey(id, CLIENT_RULE_IDS);
          problems.add(path, `unknown rule${hint ? `; did you mean "${hint}"?` : `; rules: ${CLIENT_RULE_IDS.join(', ')}`}`);
          continue;
        }
        if (typeof value !== 'boolean') problems.expected(path, 'a boolean', value);
        else if (value) on.add(id);
        else on.delete(id);
      }
    }
  }
  return { mode: resolved, rules: on };
}

/** `capabilities` (server-wide or a user's): `{ hide: ["MOVE", ...] }`; the names upper-cased. */
export function resolveCapabilities(problems: Problems, value: unknown, path: string): string[] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) {
    problems.expected(path, 'an object ({hide: [capability, ...]})', value);
    return [];
  }
  checkTypos(value, CAPABILITIES_SET, CAPABILITIES_KEYS, path, problems);
  const hide = value.hide;
  if (hide === undefined) return [];
  const hidePath = childPath(path, 'hide');
  if (!Array.isArray(hide)) {
    problems.expected(hidePath, 'an array of capability names', hide);
    return [];
  }
  const out: string[] = [];
  hide.forEach((name: unknown, i) => {
    if (typeof name === 'string' && CAPABILITY.test(name)) out.push(name.toUpperCase());
    else problems.expected(`${hidePath}[${i}]`, 'a capability name (an atom such as "MOVE" or "LITERAL+")', name);
  });
  return [...new Set(out)];
}
