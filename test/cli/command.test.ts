import { expect } from 'chai';
import { Command, Option } from 'commander';
import { InvalidInput, UsageError } from '../../src/errors/index.js';
import { actionOf, type CliCommand } from '../../src/cli/command.js';
import { jsonOption } from '../../src/cli/options.js';
import type { Io } from '../../src/cli/output.js';
import { COMMANDS, buildCli, commandsFor, registerListed, type CommandEntry } from '../../src/cli/main.js';

function capture(): Io & { outs: string[]; errs: string[] } {
  const outs: string[] = [];
  const errs: string[] = [];
  return { outs, errs, out: (l) => outs.push(l), err: (l) => errs.push(l) };
}

// A command as a new one would be written: its body returns a code or throws, and never mentions --json.
const probe: CliCommand = {
  register(cli, { io, action }) {
    cli.command('probe').argument('<what>').addOption(jsonOption())
      .action(action((what: string) => {
        if (what === 'refuse') throw new InvalidInput('/x', 'no');
        if (what === 'usage') throw new UsageError('wrong');
        if (what === 'defect') throw new TypeError('boom');
        io.out(`ran ${what}`);
        return what === 'one' ? 1 : 0;
      }));
    cli.command('fmt').addOption(new Option('--format <f>').choices(['md', 'json']).default('md'))
      .action(action(() => { throw new InvalidInput('', 'bad'); }));
  },
};

async function call(args: string[]): Promise<{ code: number | undefined; io: ReturnType<typeof capture> }> {
  const io = capture();
  let code: number | undefined;
  const cli = new Command('t').exitOverride();
  probe.register(cli, { io, action: actionOf(io, (c) => { code = c; }) });
  await cli.parseAsync(args, { from: 'user' });
  return { code, io };
}

describe('cli command wrapper', () => {
  it('passes the body\'s exit code through', async () => {
    expect((await call(['probe', 'ok'])).code).to.equal(0);
    const r = await call(['probe', 'one']);
    expect(r.code).to.equal(1);
    expect(r.io.outs).to.deep.equal(['ran one']);
  });

  it('reports a typed refusal on stderr, or as JSON on stdout when the command\'s --json was given', async () => {
    const plain = await call(['probe', 'refuse']);
    expect(plain.code).to.equal(1);
    expect(plain.io.errs).to.deep.equal(['error [InvalidInput]: invalid input at /x: no']);
    expect(plain.io.outs).to.deep.equal([]);
    const json = await call(['probe', 'refuse', '--json']);
    expect(json.code).to.equal(1);
    expect(json.io.outs.map((l) => JSON.parse(l) as unknown)).to.deep.equal([{ error: { code: 'InvalidInput', path: '/x', reason: 'no' } }]);
    expect(json.io.errs).to.deep.equal([]);
  });

  it('maps a UsageError to exit 2 and an untyped throw to exit 3', async () => {
    const usage = await call(['probe', 'usage', '--json']);
    expect(usage.code).to.equal(2);
    expect(JSON.parse(usage.io.outs[0]!)).to.deep.equal({ error: { code: 'UsageError', reason: 'wrong' } });
    const defect = await call(['probe', 'defect', '--json']);
    expect(defect.code).to.equal(3);
    expect(JSON.parse(defect.io.outs[0]!)).to.deep.equal({ error: { code: 'Internal', message: 'boom' } });
  });

  it('takes --format json (matrix) as a request for JSON too, and --format md as not', async () => {
    const json = await call(['fmt', '--format', 'json']);
    expect(json.code).to.equal(1);
    expect(JSON.parse(json.io.outs[0]!)).to.deep.equal({ error: { code: 'InvalidInput', path: '', reason: 'bad' } });
    const md = await call(['fmt']);
    expect(md.io.outs).to.deep.equal([]);
    expect(md.io.errs).to.deep.equal(['error [InvalidInput]: invalid input at (root): bad']);
  });
});

describe('cli command table (each command\'s module is imported only when a run names it)', () => {
  const quiet: Io = { out: () => undefined, err: () => undefined };
  const ctx = { io: quiet, action: actionOf(quiet, () => undefined) };
  /** The help line of `name` as the top-level --help prints it, and its description. */
  function lineOf(cli: Command, name: string): string {
    const c = cli.commands.find((x) => x.name() === name)!;
    const help = cli.createHelp();
    return `${help.subcommandTerm(c)} | ${help.subcommandDescription(c)}`;
  }
  function listed(entry: CommandEntry): string {
    const cli = new Command('t');
    registerListed(cli, entry);
    return lineOf(cli, entry.name);
  }

  it('lists each command as its module registers it: name, arguments, [options] and description', async () => {
    for (const entry of COMMANDS) {
      const cli = new Command('t');
      (await entry.load()).register(cli, ctx);
      expect(cli.commands.map((c) => c.name()), entry.name).to.deep.equal([entry.name]);
      expect(listed(entry), entry.name).to.equal(lineOf(cli, entry.name));
      // Negative control: an entry that disagrees with its module is caught by the comparison above.
      expect(listed({ ...entry, options: !entry.options })).to.not.equal(lineOf(cli, entry.name));
      expect(listed({ ...entry, description: `${entry.description}.` })).to.not.equal(lineOf(cli, entry.name));
      expect(listed({ ...entry, args: ['<more>', ...entry.args] })).to.not.equal(lineOf(cli, entry.name));
    }
  });

  it('prints the same top-level --help from the table as with every module loaded', async () => {
    const all = await commandsFor(COMMANDS.map((c) => c.name));
    expect([...all.keys()]).to.deep.equal(COMMANDS.map((c) => c.name));
    const loaded = buildCli(quiet, () => undefined, all).helpInformation();
    expect(buildCli(quiet, () => undefined, new Map()).helpInformation()).to.equal(loaded);
    expect(loaded).to.contain('tokenize [options] <source>');
  });

  it('loads only the commands argv names, including after help', async () => {
    expect([...(await commandsFor(['validate', 'p.json', '--json'])).keys()]).to.deep.equal(['validate']);
    expect([...(await commandsFor(['help', 'tokenize'])).keys()]).to.deep.equal(['tokenize']);
    expect([...(await commandsFor(['--help'])).keys()]).to.deep.equal([]);
  });
});
