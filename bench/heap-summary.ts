/**
 * Reads V8 heap snapshots (`v8.writeHeapSnapshot`) and tells where the
 * bytes of many like objects go: what a snapshot holds more than another,
 * by node kind and constructor, per unit (a session), and the retained size
 * (dominator tree) of instances of named constructors. Used by
 * `bench sessions --heap`; importing it does nothing.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface KindRow {
  /** `type:constructor` (strings grouped as `string:`). */
  kind: string;
  /** Nodes and self bytes more in the second snapshot, per unit. */
  count: number;
  bytes: number;
}

function read(file: string): Snapshot {
  return JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
}

function kinds(s: Snapshot): Map<string, { n: number; bytes: number }> {
  const meta = s.snapshot.meta;
  const stride = meta.node_fields.length;
  const type = meta.node_fields.indexOf('type');
  const name = meta.node_fields.indexOf('name');
  const size = meta.node_fields.indexOf('self_size');
  const types = meta.node_types[0];
  const out = new Map<string, { n: number; bytes: number }>();
  for (let i = 0; i < s.nodes.length; i += stride) {
    const t = types[s.nodes[i + type]!]!;
    // String contents are not kinds; closures and objects are named by their function or constructor.
    const n = t.includes('string') ? '' : s.strings[s.nodes[i + name]!]!.slice(0, 60);
    const key = `${t}:${n}`;
    const row = out.get(key) ?? { n: 0, bytes: 0 };
    row.n++;
    row.bytes += s.nodes[i + size]!;
    out.set(key, row);
  }
  return out;
}

/** What `after` holds more than `before`, by kind, divided by `units`, largest first. */
export function heapGrowth(before: string, after: string, units: number): KindRow[] {
  const a = kinds(read(before));
  const b = kinds(read(after));
  const rows: KindRow[] = [];
  for (const [kind, v] of b) {
    const u = a.get(kind) ?? { n: 0, bytes: 0 };
    rows.push({ kind, count: (v.n - u.n) / units, bytes: (v.bytes - u.bytes) / units });
  }
  return rows.sort((x, y) => y.bytes - x.bytes);
}

/**
 * Retained bytes (what would go with the object: its dominator subtree) of
 * the instances of each constructor in `names`, summed and divided by
 * `units`. Weak edges do not retain.
 */
export function retainedBy(file: string, names: readonly string[], units: number): Map<string, { count: number; bytes: number }> {
  const s = read(file);
  const meta = s.snapshot.meta;
  const stride = meta.node_fields.length;
  const nameField = meta.node_fields.indexOf('name');
  const sizeField = meta.node_fields.indexOf('self_size');
  const edgeCount = meta.node_fields.indexOf('edge_count');
  const edgeStride = meta.edge_fields.length;
  const edgeType = meta.edge_fields.indexOf('type');
  const edgeTo = meta.edge_fields.indexOf('to_node');
  const weak = meta.edge_types[0].indexOf('weak');
  const { nodes, edges, strings } = s;
  const count = nodes.length / stride;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * stride + edgeCount]!;
    firstEdge[i + 1] = e;
  }
  const target = (e: number): number => edges[e * edgeStride + edgeTo]! / stride;
  const strong = (e: number): boolean => edges[e * edgeStride + edgeType] !== weak;

  // Post-order from the root (node 0), iteratively.
  const postIndex = new Int32Array(count).fill(-1);
  const post: number[] = [];
  const next = new Uint32Array(count);
  const seen = new Uint8Array(count);
  const stack = [0];
  seen[0] = 1;
  while (stack.length > 0) {
    const v = stack[stack.length - 1]!;
    const e = firstEdge[v]! + next[v]!;
    if (e < firstEdge[v + 1]!) {
      next[v]!++;
      if (!strong(e)) continue;
      const w = target(e);
      if (seen[w] === 0) {
        seen[w] = 1;
        stack.push(w);
      }
    } else {
      stack.pop();
      postIndex[v] = post.length;
      post.push(v);
    }
  }
  // Predecessors of reachable nodes.
  const predStart = new Uint32Array(count + 1);
  for (const v of post) for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (strong(e)) predStart[target(e) + 1]!++;
  for (let i = 0; i < count; i++) predStart[i + 1]! += predStart[i]!;
  const preds = new Int32Array(predStart[count]!);
  const fill = predStart.slice();
  for (const v of post) for (let e = firstEdge[v]!; e < firstEdge[v + 1]!; e++) if (strong(e)) preds[fill[target(e)]!++] = v;
  // Immediate dominators (Cooper, Harvey and Kennedy's iteration in reverse post-order).
  const idom = new Int32Array(count).fill(-1);
  idom[0] = 0;
  const intersect = (a: number, b: number): number => {
    while (a !== b) {
      while (postIndex[a]! < postIndex[b]!) a = idom[a]!;
      while (postIndex[b]! < postIndex[a]!) b = idom[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let i = post.length - 2; i >= 0; i--) {
      const v = post[i]!;
      let dom = -1;
      for (let k = predStart[v]!; k < predStart[v + 1]!; k++) {
        const p = preds[k]!;
        if (idom[p] === -1) continue;
        dom = dom === -1 ? p : intersect(p, dom);
      }
      if (dom !== idom[v]) {
        idom[v] = dom;
        changed = true;
      }
    }
  }
  const retained = new Float64Array(count);
  for (const v of post) retained[v]! += nodes[v * stride + sizeField]!;
  for (const v of post) if (v !== 0 && idom[v]! >= 0) retained[idom[v]!]! += retained[v]!;
  const wanted = new Set(names);
  const out = new Map<string, { count: number; bytes: number }>();
  for (const v of post) {
    const name = strings[nodes[v * stride + nameField]!]!;
    if (!wanted.has(name)) continue;
    const row = out.get(name) ?? { count: 0, bytes: 0 };
    row.count += 1 / units;
    row.bytes += retained[v]! / units;
    out.set(name, row);
  }
  return out;
}
