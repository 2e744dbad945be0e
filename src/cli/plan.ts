/**
 * `npu-offload plan PROGRAM.json --target T[,T2...] [--json]` (or a model: planModel.ts): every equation admitted (with its contract) or
 * refused (every refusal at once, each as its typed error's code and fields), the regions the program
 * splits into, the hardware contexts they need, and the program's numerics class and tolerances.
 * Exit 0 when the whole program plans, 1 when anything is refused (the report is printed either way).
 */
import { backendOf, type RegionSummary } from '../compiler/index.js';
import type { EngineError } from '../errors/index.js';
import { ContextLimit } from '../errors/index.js';
import { resolveLimits } from '../ir/limits.js';
import { checkProgram } from '../ops/validate.js';
import { tolName, type Tolerance } from '../numerics/compare.js';
import { planReport } from '../planner/report.js';
import { resolveTarget } from '../targets/index.js';
import { describeContract } from '../targets/contract.js';
import { equationNumerics } from '../targets/numerics.js';
import { readProgram } from './files.js';
import { limitsOfFlags, type LimitFlags } from './limits.js';
import type { CliCommand } from './command.js';
import { intArg, jsonOption, withLimitFlags } from './options.js';
import { Option } from 'commander';
import { parseTargetList } from '../planner/partition.js';
import { planPartitioned } from './planPartition.js';
import { checkProgramFlags, isModelPath, modelProgram, type PlanModelFlags } from './planModel.js';
import type { Io } from './output.js';
import { EXIT, errorJson } from './output.js';

export interface PlanOptions extends LimitFlags, PlanModelFlags {
  readonly target: string;
  readonly json?: boolean;
}

// Derived tolerances carry many digits; three are what a person compares.
function tolText(t: Tolerance): string {
  const p = (v: number) => (v === 0 ? '0' : v < 1e-3 ? v.toExponential(2).replace(/\.?0+e/, 'e') : String(Number(v.toPrecision(3))));
  return t.kind === 'absrel' ? `abs ${p(t.abs)} + rel ${p(t.rel)}` : tolName(t);
}

function fields(e: EngineError): string {
  return Object.entries(e.fields()).filter(([k]) => k !== 'eqn').map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v) : String(v)}`).join(' ');
}

function regionLine(r: RegionSummary): string {
  const span = r.eqns.length === 0 ? 'no equations' : `eqns ${r.eqns[0]}-${r.eqns[r.eqns.length - 1]}`;
  if (r.usage === undefined) return `  region ${r.index}: ${span}`;
  const u = r.usage;
  const lines = [`  region ${r.index}: ${span}, ${u.tiles} tiles, streams ${u.streamsIn} in / ${u.streamsOut} out, ${u.streamsPerTile} per tile, ${u.tileLocalBytes} tile-local bytes (closed by ${r.closedBy ?? 'end'})`];
  if (r.tiles) lines.push(`    tiles: ${r.tiles.map((t) => `eqn ${t.eqn} [${t.tile.join(', ')}]`).join(', ')}`);
  for (const a of r.arenas ?? []) {
    lines.push(`    arena ${a.name} (${a.direction}, ${a.bytes} bytes): ${a.tensors.map((t) => `${t.value} @${t.offset}`).join(', ')}`);
  }
  return lines.join('\n');
}

/** Plans one program file on a target and prints the report; returns the exit code. */
export function planCommand(file: string, opts: PlanOptions, io: Io): number {
  const targets = parseTargetList(opts.target);
  const limits = resolveLimits(limitsOfFlags(opts));
  const model = isModelPath(file);
  if (!model) checkProgramFlags(opts);
  const checked = checkProgram(model ? modelProgram(file, opts.target, opts) : readProgram(file, limits), limits);
  // A comma list is planned partitioned (planPartition.ts); one target keeps its all-or-refused report.
  if (targets.length > 1) return planPartitioned(checked, targets, limits, opts.json === true, io);
  const target = resolveTarget(opts.target);
  const report = planReport(checked, target);
  const refused: EngineError[] = [...report.refused];
  const { regions, limit, contexts } = backendOf(target.name).layout(checked, refused.length === 0);
  if (limit !== undefined) refused.push(limit);
  if (contexts.max !== null && contexts.needed > contexts.max) refused.push(new ContextLimit(contexts.needed, contexts.max));
  const names = new Map(checked.eqns.map((e) => [e.index, e.op]));
  const n = report.numerics;

  if (opts.json) {
    io.out(JSON.stringify({
      program: checked.program.name,
      target: target.name,
      part: target.part,
      admitted: report.admitted.map((a) => ({ eqn: a.eqn, op: a.op, contract: a.contract ?? null })),
      refused: refused.map((e) => errorJson(e).error),
      regions,
      contexts,
      numerics: { class: n.numericsClass, tolerance: n.tolerance, assumptions: n.assumptions },
    }));
    return refused.length === 0 ? EXIT.ok : EXIT.refused;
  }

  io.out(`plan: program ${JSON.stringify(checked.program.name)} on ${target.name} (${target.part}): ${refused.length === 0 ? 'admitted' : `${refused.length} refusal${refused.length === 1 ? '' : 's'}`}`);
  io.out(`admitted (${report.admitted.length} of ${checked.eqns.length}):`);
  for (const a of report.admitted) io.out(`  eqn ${a.eqn} ${a.op}: ${a.contract ? describeContract(a.contract) : equationNumerics(target.numerics)}`);
  io.out(`refused (${refused.length}):`);
  for (const e of refused) {
    const at = 'eqn' in e && typeof e.eqn === 'number' ? `eqn ${e.eqn} ${names.get(e.eqn) ?? ''}: ` : '';
    io.out(`  ${at}${e.code} ${fields(e)}`.trimEnd());
  }
  io.out(`regions (${regions.length})${regions.length === 0 ? ': none until every equation is admitted and fits a region' : ':'}`);
  for (const r of regions) io.out(regionLine(r));
  io.out(`contexts: ${contexts.needed}${contexts.max === null ? ' (no bound on this target)' : ` of ${contexts.max}`}`);
  io.out(`numerics: ${n.numericsClass}`);
  for (const [r, t] of Object.entries(n.tolerance)) {
    io.out(`  result ${r}: ${tolText(t)}`);
    for (const a of n.assumptions[r] ?? []) io.out(`    assumes ${a}`);
  }
  return refused.length === 0 ? EXIT.ok : EXIT.refused;
}

/** `plan PROGRAM --target T`. */
export const plan: CliCommand = {
  register(cli, { io, action }) {
    withLimitFlags(cli.command('plan'))
      .description('show what a target admits and refuses of a program, its regions and contexts')
      .argument('<program>', 'program JSON file, or a model (a GGUF file or a model directory): its decode program')
      .addOption(new Option('--target <targets>', 'target, or a comma list in order of preference (xdna2,host)').makeOptionMandatory())
      .addOption(new Option('--tokens <n>', 'for a model: the prefill program of n tokens (default 1: the decode program)').argParser(intArg('--tokens')))
      .addOption(new Option('--ctx <n>', 'for a model: the positions of its KV cache (default the smaller of 1024 and its context)').argParser(intArg('--ctx')))
      .addOption(jsonOption())
      .action(action((f: string, o: PlanOptions) => planCommand(f, o, io)));
  },
};
