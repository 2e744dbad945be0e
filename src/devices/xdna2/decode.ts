/**
 * Reads an XDNA2 artifact's bytes back into its manifest, refusing any damage with LoadFailed. The
 * header (magic, format version, manifest length, CRC-32) is checked by the region compiler's own
 * reader (link.ts decodeAieArtifact); on top of it the device checks the shape of every manifest field
 * it reads, so it never trusts bytes more than the loader of a real xclbin would.
 */
import { LoadFailed, messageOf } from '../../errors/index.js';
import type { AieManifest } from '../../compiler/aie/artifact.js';
import { decodeAieArtifact } from '../../compiler/aie/link.js';
import { DTYPES } from '../../ir/types.js';

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isUint(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

/** Decodes and checks an artifact's bytes; LoadFailed(device, detail) on any damage. */
export function decodeManifest(bytes: Uint8Array, device: string): AieManifest {
  const fail = (detail: string): never => { throw new LoadFailed(device, detail); };
  let json: unknown;
  try {
    json = decodeAieArtifact(bytes);
  } catch (e) {
    // The reader's own errors are plain (the compiler sits below the device layer's error mapping).
    fail(messageOf(e));
  }
  checkShape(json, fail);
  return json as AieManifest;
}

function checkType(t: unknown, at: string, fail: (d: string) => never): void {
  if (!isObj(t) || !(DTYPES as readonly string[]).includes(t['dtype'] as string)) fail(`${at} has no valid dtype`);
  const shape = (t)['shape'];
  if (!Array.isArray(shape) || !shape.every(isUint)) fail(`${at} has no valid shape`);
}

function checkEndpoint(e: unknown, at: string, fail: (d: string) => never): void {
  if (!isObj(e)) fail(`${at} is not an endpoint`);
  const o = e;
  switch (o['kind']) {
    case 'host':
      if (!isUint(o['arena']) || !isUint(o['offset']) || typeof o['value'] !== 'string') fail(`${at}: a host endpoint needs arena, offset and value`);
      if (o['fifo'] !== undefined && !isUint(o['fifo'])) fail(`${at}: a host endpoint's fifo is no fifo index`);
      return;
    case 'fifo':
      if (!isUint(o['fifo']) || typeof o['value'] !== 'string') fail(`${at}: a fifo endpoint needs fifo and value`);
      return;
    case 'literal':
      if (typeof o['lit'] !== 'number' || !(DTYPES as readonly string[]).includes(o['dtype'] as string)) fail(`${at}: a literal endpoint needs lit and dtype`);
      return;
    default:
      fail(`${at} has unknown kind ${JSON.stringify(o['kind'])}`);
  }
}

// Only what the device reads is checked here; cores.ts checks that the cores make sense together.
function checkShape(m: unknown, fail: (d: string) => never): void {
  if (!isObj(m)) fail('the manifest is not an object');
  const o = m;
  if (o['part'] !== 'aie2p') fail(`the artifact is for part ${JSON.stringify(o['part'])}, this device is aie2p`);
  if (typeof o['program'] !== 'string') fail('the manifest names no program');
  for (const k of ['cores', 'fifos', 'arenas', 'args'] as const) if (!Array.isArray(o[k])) fail(`the manifest has no ${k} list`);
  (o['args'] as unknown[]).forEach((a, i) => {
    const at = `args[${i}]`;
    if (!isObj(a) || typeof a['name'] !== 'string' || (a['direction'] !== 'in' && a['direction'] !== 'out')) fail(`${at} needs a name and a direction`);
    checkType(a, at, fail);
    const x = a;
    if (!isUint(x['bytes']) || !isUint(x['arena']) || !isUint(x['offset'])) fail(`${at} needs bytes, arena and offset`);
  });
  (o['arenas'] as unknown[]).forEach((a, i) => {
    if (!isObj(a) || !isUint(a['bytes'])) fail(`arenas[${i}] needs bytes`);
  });
  (o['fifos'] as unknown[]).forEach((f, i) => {
    if (!isObj(f) || !isUint(f['bytes'])) fail(`fifos[${i}] needs bytes`);
  });
  (o['cores'] as unknown[]).forEach((c, i) => {
    const at = `cores[${i}]`;
    if (!isObj(c) || typeof c['op'] !== 'string' || !isObj(c['attrs'])) fail(`${at} needs an op and attrs`);
    const x = c;
    const tile = x['tile'];
    if (!Array.isArray(tile) || tile.length !== 2 || !tile.every(isUint)) fail(`${at} has no [column, row] tile`);
    if (!isUint(x['localBytes'])) fail(`${at} has no localBytes`);
    for (const k of ['ins', 'inTypes', 'outs', 'outTypes'] as const) if (!Array.isArray(x[k])) fail(`${at} has no ${k} list`);
    const ins = x['ins'] as unknown[];
    const outs = x['outs'] as unknown[];
    if (ins.length !== (x['inTypes'] as unknown[]).length) fail(`${at} has ${ins.length} inputs and ${(x['inTypes'] as unknown[]).length} input types`);
    if (outs.length !== (x['outTypes'] as unknown[]).length) fail(`${at} has ${outs.length} outputs and ${(x['outTypes'] as unknown[]).length} output types`);
    ins.forEach((e, j) => checkEndpoint(e, `${at}.ins[${j}]`, fail));
    outs.forEach((e, j) => checkEndpoint(e, `${at}.outs[${j}]`, fail));
    (x['inTypes'] as unknown[]).forEach((t, j) => checkType(t, `${at}.inTypes[${j}]`, fail));
    (x['outTypes'] as unknown[]).forEach((t, j) => checkType(t, `${at}.outTypes[${j}]`, fail));
  });
}
