/**
 * `npu-offload addon PKG [COMMAND [ARGS...]]`: runs a subcommand an add-on registered
 * (registry.addCommand); without COMMAND it lists the add-on's routes and commands.
 */
import { UsageError } from '../errors/index.js';
import { Registry, loadAddon } from '../serve/addons.js';
import type { CliCommand } from './command.js';
import { EXIT, type Io } from './output.js';

/** Runs `addon`; returns the exit code. */
async function addonCommand(pkg: string, name: string | undefined, args: readonly string[], io: Io): Promise<number> {
  const registry = new Registry();
  await loadAddon(pkg, registry);
  if (name === undefined) {
    for (const r of registry.routes) io.out(`route ${r.modelType}${r.optional === true ? ' (optional)' : ''}`);
    for (const c of registry.commands) io.out(`command ${c.name}: ${c.description}`);
    return EXIT.ok;
  }
  const c = registry.commands.find((x) => x.name === name);
  if (c === undefined) throw new UsageError(`the add-on ${pkg} has no command ${JSON.stringify(name)} (its commands: ${registry.commands.map((x) => x.name).join(', ') || 'none'})`);
  return c.run(args, io.out);
}

/** `npu-offload addon`. */
export const addon: CliCommand = {
  register(cli, { io, action }) {
    cli.command('addon').description('list an add-on\'s routes and commands, or run one of its commands')
      .argument('<pkg>', 'the add-on: a package name or a path to an ESM file')
      .argument('[command]', 'a command the add-on registered')
      .argument('[args...]', 'its arguments')
      .allowUnknownOption()
      .action(action((pkg: string, name: string | undefined, args: string[]) => addonCommand(pkg, name, args, io)));
  },
};
