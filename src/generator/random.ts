/**
 * The generator's randomness: the project's mulberry32 (src/util/prng.ts),
 * one stream per message derived from (seed, index), so message i is the
 * same whatever the count, and integer arithmetic only (Math.imul, >>>),
 * which every JavaScript engine computes alike.
 */
import { Prng, mix32 as mix } from '../util/prng.js';

/** A stream for `(seed, index, purpose)`: purposes keep streams of one message apart. */
export function streamSeed(seed: number, index: number, purpose = 0): number {
  return mix((mix(seed ^ 0x9e3779b9) + Math.imul(index + 1, 0x27d4eb2f) + Math.imul(purpose, 0x165667b1)) >>> 0);
}

export class Rng {
  private readonly prng: Prng;

  constructor(seed: number) {
    this.prng = new Prng(seed);
  }

  next(): number {
    return this.prng.next();
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return this.prng.below(n);
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + this.prng.below(hi - lo + 1);
  }

  chance(p: number): boolean {
    return p > 0 && this.prng.next() < p;
  }

  pick<T>(list: readonly T[]): T {
    return list[this.prng.below(list.length)]!;
  }

  /** A key of `weights` drawn in proportion to its weight (keys in the order given). */
  weighted<K extends string>(keys: readonly K[], weights: Readonly<Record<K, number>>): K {
    let total = 0;
    for (const k of keys) total += weights[k];
    let x = this.prng.next() * total;
    for (const k of keys) {
      x -= weights[k];
      if (x < 0 && weights[k] > 0) return k;
    }
    for (let i = keys.length - 1; i >= 0; i--) if (weights[keys[i]!] > 0) return keys[i]!;
    return keys[0]!;
  }

  /**
   * A size in [min, max], about log-uniform: a power-of-two band is drawn
   * first, then a size inside it, so there are as many messages of 1-2 KiB
   * as of 1-2 MiB. Integers only (no Math.log), the same on every engine.
   */
  size(range: { min: number; max: number }): number {
    if (range.max <= range.min) return range.min;
    const bits = (n: number): number => {
      let b = 0;
      while (2 ** b <= n) b++;
      return b;
    };
    const loBand = bits(range.min);
    const hiBand = bits(range.max);
    const band = this.int(loBand, hiBand);
    const lo = Math.max(range.min, band === 0 ? 0 : 2 ** (band - 1));
    const hi = Math.min(range.max, band === 0 ? 0 : 2 ** band - 1);
    return lo >= hi ? lo : this.int(lo, hi);
  }

  /** `n` bytes of noise (attachment contents). */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let i = 0;
    for (; i + 4 <= n; i += 4) out.writeUInt32LE(Math.floor(this.prng.next() * 4294967296) >>> 0, i);
    for (; i < n; i++) out[i] = this.prng.below(256);
    return out;
  }
}
