/**
 * Add-on routes: an ESM package (or file) exporting `register(registry)`, which adds routes by a model
 * directory's config.json `model_type`. A route answers `canServe(dir)` with true or
 * `{ unavailable: reason }`, and `open(dir, options)` gives a session that generates token ids from
 * token ids; the server tokenizes, samples nothing itself, and cuts the text at stop strings.
 */
import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { InvalidOptions, messageOf } from '../errors/index.js';

/** What a route's session is asked to generate. */
export interface RouteDecode {
  readonly promptIds: readonly number[];
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly seed?: number;
  readonly repetitionPenalty?: number;
}

/** A route's open model: ids in, ids out (its `return()` is called when the client leaves). */
export interface RouteSession {
  generate(r: RouteDecode): AsyncIterable<number>;
  close?(): Promise<void>;
}

/** The options `serve` hands a route: the shared flags and every `--npu-opt KEY=VALUE`. */
export interface RouteOptions {
  readonly target: string;
  readonly ctx?: number;
  readonly threads?: number;
  readonly npuOpts: Readonly<Record<string, string>>;
}

/** The answer of canServe: yes, or why not. */
export type CanServe = true | { readonly unavailable: string };

/** A route for one `model_type`. */
export interface ServeRoute {
  readonly modelType: string;
  /** An optional route that declines leaves the directory to the built-in path. */
  readonly optional?: boolean;
  canServe(dir: string): CanServe | Promise<CanServe>;
  open(dir: string, options: RouteOptions): Promise<RouteSession>;
}

/** A CLI subcommand an add-on adds (`npu-offload addon PKG NAME ARGS...`): arguments and output lines in, exit code out. */
export interface AddonCommand {
  readonly name: string;
  readonly description: string;
  run(args: readonly string[], out: (line: string) => void): Promise<number>;
}

/** What `register` receives. */
export interface AddonRegistry {
  addRoute(route: ServeRoute): void;
  addCommand(command: AddonCommand): void;
}

/** The routes and commands the loaded add-ons registered. */
export class Registry implements AddonRegistry {
  readonly routes: ServeRoute[] = [];
  readonly commands: AddonCommand[] = [];
  addRoute(route: ServeRoute): void {
    if (typeof route?.modelType !== 'string' || typeof route.canServe !== 'function' || typeof route.open !== 'function') {
      throw new InvalidOptions('addon', 'a route has a modelType string and canServe and open functions');
    }
    this.routes.push(route);
  }
  addCommand(command: AddonCommand): void { this.commands.push(command); }
  /** The routes for a model_type, in the order they were added. */
  routesFor(modelType: string): ServeRoute[] { return this.routes.filter((r) => r.modelType === modelType); }
}

/** Loads an add-on by package name or path and lets it register; InvalidOptions('addon') when it cannot. */
export async function loadAddon(spec: string, registry: Registry): Promise<void> {
  const local = spec.startsWith('.') || isAbsolute(spec);
  const target = local ? pathToFileURL(resolve(spec)).href : spec;
  if (local && !existsSync(resolve(spec))) throw new InvalidOptions('addon', `no such add-on file ${spec}`);
  let mod: { register?: unknown };
  try {
    mod = (await import(target)) as { register?: unknown };
  } catch (e) {
    throw new InvalidOptions('addon', `cannot load the add-on ${spec}: ${messageOf(e)}`);
  }
  if (typeof mod.register !== 'function') throw new InvalidOptions('addon', `the add-on ${spec} exports no register(registry) function`);
  await (mod.register as (r: AddonRegistry) => unknown)(registry);
}
