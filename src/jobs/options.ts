/**
 * The checks of what a caller hands the engine, made where it is handed over: createEngine's options
 * (thrown as InvalidOptions naming the field) and a submitted job (its options likewise; its program
 * and inputs copied into plain data the engine owns, refused as InvalidProgram / InvalidInput naming
 * the value's JSON pointer). A caller's mistake is never reported as an engine defect.
 */
import { EngineError, InvalidInput, InvalidOptions, InvalidProgram, messageOf, ResourceLimit } from '../errors/index.js';
import type { DeviceKind } from '../devices/device.js';
import { HOST_MATMUL_CLASSES } from '../compiler/host/kernelList.js';
import { checkFaults } from '../devices/faults.js';
import { DEVICES } from '../devices/registry.js';
import { DEFAULT_MAX_STEPS } from '../ir/inputsCodec.js';
import { isRecord, kindOf } from '../ir/pointer.js';
import { ProgramBuilder } from '../ops/builder.js';
import { inputsJsonOf, programJsonOf } from './inputs.js';
import { snapshot } from './snapshot.js';

/** How many of a job's last steps keep their results in `result.steps` unless the job says otherwise. */
export const DEFAULT_KEPT_STEPS = 1000;

const DEVICE_KINDS = Object.keys(DEVICES) as readonly DeviceKind[];
const DEVICE_MODES: readonly string[] = ['auto', 'native', 'simulated'];


/** `o[k]`, with a getter that throws reported as the caller's mistake at `field`. */
function read(o: object, k: string, field: string): unknown {
  try {
    return (o as Record<string, unknown>)[k];
  } catch (e) {
    throw new InvalidOptions(field, `reading it threw ${messageOf(e)}`);
  }
}

/** A shallow copy of an options object, each own key read once (a getter is not asked twice). */
function copyOf(o: unknown, field: string): Record<string, unknown> {
  if (!isRecord(o)) throw new InvalidOptions(field, `an object of options, not ${kindOf(o)}`);
  let keys: string[];
  try { keys = Object.keys(o); } catch (e) { throw new InvalidOptions(field, `listing its keys threw ${messageOf(e)}`); }
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = read(o, k, field === '' ? k : `${field}.${k}`);
  return out;
}

function isCount(v: unknown, min: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
}

function count(v: unknown, field: string, min: number, what: string): void {
  if (v !== undefined && !isCount(v, min)) throw new InvalidOptions(field, `${what} is a whole number of at least ${min}, not ${kindOf(v)}`);
}

/**
 * A deadline is a positive number of ms, or Infinity for none. 0 is refused: it would be a deadline
 * already past, which a cold engine (still starting its device) and a warm one would miss differently.
 */
export function checkDeadline(v: unknown, field = 'deadlineMs'): void {
  if (v === undefined) return;
  if (!(typeof v === 'number' && v > 0 && !Number.isNaN(v))) {
    throw new InvalidOptions(field, `a deadline is a positive number of ms (Infinity for none), not ${kindOf(v)}`);
  }
}

/** A maximum that is a positive whole number or Infinity (no maximum). */
function checkMax(v: unknown, field: string): void {
  if (v !== undefined && v !== Infinity && !isCount(v, 1)) throw new InvalidOptions(field, `a maximum is a whole number of at least 1 (or Infinity), not ${kindOf(v)}`);
}

function checkDevices(v: unknown): Record<string, unknown> | undefined {
  if (v === undefined) return undefined;
  const devices = copyOf(v, 'devices');
  for (const [kind, cfg] of Object.entries(devices)) {
    const at = `devices.${kind}`;
    if (!(DEVICE_KINDS as readonly string[]).includes(kind)) throw new InvalidOptions(at, `no such device kind (the kinds: ${DEVICE_KINDS.join(', ')})`);
    if (cfg === undefined) continue;
    const c = copyOf(cfg, at);
    if (c['mode'] !== undefined && !DEVICE_MODES.includes(c['mode'] as string)) throw new InvalidOptions(`${at}.mode`, `one of ${DEVICE_MODES.join(', ')}, not ${kindOf(c['mode'])}`);
    count(c['maxContexts'], `${at}.maxContexts`, 1, 'a context count');
    count(c['threads'], `${at}.threads`, 1, 'a thread count');
    if (typeof c['threads'] === 'number' && c['threads'] > 1024) throw new InvalidOptions(`${at}.threads`, `at most 1024 threads, not ${c['threads']}`);
    if (c['matmul'] !== undefined) {
      if (kind !== 'host') throw new InvalidOptions(`${at}.matmul`, 'only the host device takes a matmul class');
      if (!(HOST_MATMUL_CLASSES as readonly unknown[]).includes(c['matmul'])) throw new InvalidOptions(`${at}.matmul`, `one of ${HOST_MATMUL_CLASSES.join(', ')}, not ${JSON.stringify(c['matmul']) ?? kindOf(c['matmul'])}`);
    }
    if (c['faults'] !== undefined) {
      try { c['faults'] = checkFaults(copyOf(c['faults'], `${at}.faults`)); } catch (e) {
        if (e instanceof InvalidOptions) throw e;
        throw new InvalidOptions(`${at}.faults`, messageOf(e));
      }
    }
    if (c['wrongKernel'] !== undefined) {
      const w = copyOf(c['wrongKernel'], `${at}.wrongKernel`);
      if (typeof w['graph'] !== 'string') throw new InvalidOptions(`${at}.wrongKernel.graph`, `a program name, not ${kindOf(w['graph'])}`);
      count(w['index'], `${at}.wrongKernel.index`, 0, 'an element index');
      if (!(typeof w['ulps'] === 'number' && Number.isFinite(w['ulps']))) throw new InvalidOptions(`${at}.wrongKernel.ulps`, `a finite number, not ${kindOf(w['ulps'])}`);
      c['wrongKernel'] = w;
    }
    for (const k of ['chaos', 'plan'] as const) if (c[k] !== undefined && !isRecord(c[k])) throw new InvalidOptions(`${at}.${k}`, `an object, not ${kindOf(c[k])}`);
    devices[kind] = c;
  }
  return devices;
}

/** createEngine's options, checked and copied; throws InvalidOptions naming the first field refused. */
export function checkEngineOptions(opts: unknown): Record<string, unknown> {
  const o = copyOf(opts ?? {}, '');
  const dir = o['cacheDir'];
  if (dir !== undefined && !(typeof dir === 'string' && dir !== '' && !dir.includes('\u0000'))) {
    throw new InvalidOptions('cacheDir', `a directory path (a non-empty string), not ${kindOf(dir)}`);
  }
  count(o['workers'], 'workers', 1, 'a worker count');
  count(o['oracleWorkers'], 'oracleWorkers', 1, 'a worker count');
  checkDeadline(o['deadlineMs']);
  checkMax(o['maxSteps'], 'maxSteps');
  if (o['restart'] !== undefined) {
    const r = copyOf(o['restart'], 'restart');
    if (!isCount(r['max'], 0)) throw new InvalidOptions('restart.max', `a restart count is a whole number of at least 0, not ${kindOf(r['max'])}`);
    const w = r['windowMs'];
    if (!(typeof w === 'number' && Number.isFinite(w) && w > 0)) throw new InvalidOptions('restart.windowMs', `a window is a positive number of ms, not ${kindOf(w)}`);
    o['restart'] = r;
  }
  if (o['cacheRetry'] !== undefined) {
    const r = copyOf(o['cacheRetry'], 'cacheRetry');
    for (const k of ['firstMs', 'maxMs'] as const) {
      const v = r[k];
      if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) throw new InvalidOptions(`cacheRetry.${k}`, `a positive number of ms, not ${kindOf(v)}`);
    }
    if (r['now'] !== undefined && typeof r['now'] !== 'function') throw new InvalidOptions('cacheRetry.now', `a function returning ms, not ${kindOf(r['now'])}`);
    o['cacheRetry'] = r;
  }
  const devices = checkDevices(o['devices']);
  if (devices !== undefined) o['devices'] = devices;
  return o;
}

/** A submitted job as the engine runs it: plain data it owns, every option checked. */
export interface CheckedJob {
  readonly programJson: unknown;
  readonly target: string;
  readonly inputsJson: unknown;
  readonly steps: number | undefined;
  readonly verify: boolean;
  readonly deadlineMs: number | undefined;
  readonly keepSteps: number;
}

/** The format's JSON of a copied program; an object that looks decoded but is not a Program is refused as one. */
function programOf(copy: unknown): unknown {
  if (typeof copy !== 'object' || copy === null) return copy;
  try {
    return programJsonOf(copy);
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new InvalidProgram('', `not a program the engine can read: ${messageOf(e)}`);
  }
}

/** A caller's program (JSON, decoded or a builder) as the format's JSON the engine owns; see the file's doc. */
export function programJsonFrom(program: unknown): unknown {
  if (program === undefined || program === null) throw new InvalidOptions('program', 'a job needs a program');
  // A builder is the caller's own object: it is built (its typed refusals are its own), not walked.
  if (program instanceof ProgramBuilder) return programJsonOf(program);
  return programOf(snapshot(program, (path, reason) => new InvalidProgram(path, reason)));
}

/** Checks a job spec and copies its program and inputs (see the file's doc); `maxSteps` bounds `steps`. */
export function checkJobSpec(spec: unknown, maxSteps = DEFAULT_MAX_STEPS): CheckedJob {
  if (!isRecord(spec)) throw new InvalidOptions('job', `a job is an object ({ program, target, inputs, ... }), not ${kindOf(spec)}`);
  const target = read(spec, 'target', 'target');
  if (typeof target !== 'string') throw new InvalidOptions('target', `a target name (a string), not ${kindOf(target)}`);
  const steps = read(spec, 'steps', 'steps');
  count(steps, 'steps', 1, 'a step count');
  if (typeof steps === 'number' && steps > maxSteps) throw new ResourceLimit('steps', steps, maxSteps);
  const verify = read(spec, 'verify', 'verify');
  if (verify !== undefined && typeof verify !== 'boolean') throw new InvalidOptions('verify', `true or false, not ${kindOf(verify)}`);
  const deadlineMs = read(spec, 'deadlineMs', 'deadlineMs');
  checkDeadline(deadlineMs);
  const keepSteps = read(spec, 'keepSteps', 'keepSteps');
  if (keepSteps !== undefined && keepSteps !== Infinity && !isCount(keepSteps, 0)) {
    throw new InvalidOptions('keepSteps', `a whole number of steps of at least 0 (or Infinity), not ${kindOf(keepSteps)}`);
  }

  const programJson = programJsonFrom(read(spec, 'program', 'program'));
  const inputs = read(spec, 'inputs', 'inputs');
  const inputsJson = inputsJsonOf(snapshot(inputs, (path, reason) => new InvalidInput(path, reason)));
  return {
    programJson, target, inputsJson,
    steps: steps as number | undefined,
    verify: verify === true,
    deadlineMs: deadlineMs as number | undefined,
    keepSteps: (keepSteps) ?? DEFAULT_KEPT_STEPS,
  };
}
