/** `npu-offload validate PROGRAM.json`: checks a program against the format and says what it holds. */
import { resolveLimits } from '../ir/limits.js';
import { checkProgram } from '../ops/validate.js';
import { readProgram } from './files.js';
import { limitsOfFlags, type LimitFlags } from './limits.js';
import type { CliCommand } from './command.js';
import { jsonOption, withLimitFlags } from './options.js';
import type { Io } from './output.js';
import { EXIT } from './output.js';

interface ValidateOptions extends LimitFlags { readonly json?: boolean }

/** Validates one program file; throws the typed error that refuses it. */
function validateCommand(file: string, opts: ValidateOptions, io: Io): number {
  const limits = resolveLimits(limitsOfFlags(opts));
  const checked = checkProgram(readProgram(file, limits), limits);
  const p = checked.program;
  const summary = {
    valid: true,
    name: p.name,
    args: p.args.length,
    eqns: p.eqns.length,
    results: p.results.map((r) => {
      const t = checked.types.get(r)!;
      return { name: r, dtype: t.dtype, shape: [...t.shape] };
    }),
  };
  if (opts.json) io.out(JSON.stringify(summary));
  else {
    io.out(`ok: program ${JSON.stringify(p.name)} is valid (${p.args.length} args, ${p.eqns.length} equations)`);
    for (const r of summary.results) io.out(`  result ${r.name}: ${r.dtype}[${r.shape.join(', ')}]`);
  }
  return EXIT.ok;
}

/** `validate PROGRAM`. */
export const validate: CliCommand = {
  register(cli, { io, action }) {
    withLimitFlags(cli.command('validate'))
      .description('check a program against the program format')
      .argument('<program>', 'program JSON file')
      .addOption(jsonOption())
      .action(action((f: string, o: ValidateOptions) => validateCommand(f, o, io)));
  },
};
