/**
 * The structure of a `row_kernel` body (`params`, `steps`, `results`). Only the shape of the JSON is
 * checked here; names, step ops and types are checked by validation against the op table.
 */
import { InvalidProgram } from '../errors/index.js';
import { decodeOperands } from './operand.js';
import { isRecord, kindOf, ptr, valueNameProblem } from './pointer.js';
import type { BodyStep, RowBody } from './types.js';

function names(v: unknown, path: string, what: string, defines: boolean): string[] {
  if (!Array.isArray(v)) throw new InvalidProgram(path, `a body's "${what}" is an array of names, not ${kindOf(v)}`);
  return v.map((n, k) => {
    if (typeof n !== 'string' || n === '') throw new InvalidProgram(ptr(path, k), `a name is a non-empty string, not ${kindOf(n)}`);
    const bad = defines ? valueNameProblem(n) : undefined;
    if (bad !== undefined) throw new InvalidProgram(ptr(path, k), `a param: ${bad}`);
    return n;
  });
}

function step(v: unknown, path: string): BodyStep {
  if (!isRecord(v)) throw new InvalidProgram(path, `a body step is an object { "op", "in", "out" }, not ${kindOf(v)}`);
  for (const k of Object.keys(v)) {
    // Steps are elementwise ops and whole-row reductions: none of them takes an attribute.
    if (k !== 'op' && k !== 'in' && k !== 'out') throw new InvalidProgram(ptr(path, k), `a body step has only "op", "in" and "out"; steps take no attributes, so "${k}" is refused`);
  }
  const op = v['op'];
  if (typeof op !== 'string') throw new InvalidProgram(ptr(path, 'op'), `a step's "op" is a string, not ${kindOf(op)}`);
  const ins = decodeOperands(v['in'], ptr(path, 'in'));
  const out = v['out'];
  if (typeof out !== 'string' || out === '') throw new InvalidProgram(ptr(path, 'out'), `a step's "out" is a non-empty name, not ${kindOf(out)}`);
  const bad = valueNameProblem(out);
  if (bad !== undefined) throw new InvalidProgram(ptr(path, 'out'), `a step's "out": ${bad}`);
  return { op, in: ins, out };
}

/** Decodes a row_kernel body at `path` (the attribute's pointer, e.g. `/eqns/3/body`). */
export function decodeRowBody(v: unknown, path: string): RowBody {
  if (!isRecord(v)) throw new InvalidProgram(path, `a row_kernel body is an object { "params", "steps", "results" }, not ${kindOf(v)}`);
  for (const k of Object.keys(v)) {
    if (k !== 'params' && k !== 'steps' && k !== 'results') throw new InvalidProgram(ptr(path, k), `a body has only "params", "steps" and "results", not "${k}"`);
  }
  const params = names(v['params'], ptr(path, 'params'), 'params', true);
  const rawSteps = v['steps'];
  if (!Array.isArray(rawSteps)) throw new InvalidProgram(ptr(path, 'steps'), `a body's "steps" is an array, not ${kindOf(rawSteps)}`);
  const steps = rawSteps.map((s, k) => step(s, ptr(path, 'steps', k)));
  const results = names(v['results'], ptr(path, 'results'), 'results', false);
  if (results.length === 0) throw new InvalidProgram(ptr(path, 'results'), 'a body has at least one result');
  return { params, steps, results };
}
