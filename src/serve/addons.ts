/**
 * Add-on routes: an ESM package (or file) exporting `register(registry)`, which adds routes by a model
 * directory's config.json `model_type`. A route answers `canServe(dir)` with true or
 * `{ unavailable: reason }`, and `open(dir, options)` gives a route model that generates token ids from
 * token ids; the server tokenizes, samples nothing itself, and cuts the text at stop strings.
 *
 * An add-on is someone else's code: its load (import and register) is bounded in time, and every hook
 * it gives (register, canServe, open, its route model's generate and close, a command's run) is wrapped so
 * that a throw, or an answer out of the hook's contract, is an AddonError naming the add-on and the
 * hook (exit 1), never an internal error. A typed error of the engine a hook throws passes as it is.
 */
import { pathToFileURL } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { AddonError, EngineError, InvalidOptions, messageOf, type AddonHook } from '../errors/index.js';
import { shown } from '../io/escape.js';

/** What a route model is asked to generate. */
interface RouteDecode {
  readonly promptIds: readonly number[];
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly seed?: number;
  readonly repetitionPenalty?: number;
}

/** A route's open model (what `open` gives): ids in, ids out (its `return()` is called when the client leaves). */
export interface RouteModel {
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
type CanServe = true | { readonly unavailable: string };

/** A route for one `model_type`. */
export interface ServeRoute {
  readonly modelType: string;
  /** An optional route that declines leaves the directory to the built-in path. */
  readonly optional?: boolean;
  canServe(dir: string): CanServe | Promise<CanServe>;
  open(dir: string, options: RouteOptions): Promise<RouteModel>;
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

/** How long an add-on's import and register may take together, by default (docs/LIMITS.md). */
const DEFAULT_ADDON_LOAD_MS = 10_000;
const LOAD_ENV = 'NPU_OFFLOAD_ADDON_LOAD_MS';

/** The longest a timer waits (setTimeout fires at once past it). */
const MAX_LOAD_MS = 2 ** 31 - 1;

/** The bound on an add-on's load: NPU_OFFLOAD_ADDON_LOAD_MS when set (whole ms, at least 1), else the default. */
export function addonLoadMs(): number {
  const v = process.env[LOAD_ENV];
  if (v === undefined || v === '') return DEFAULT_ADDON_LOAD_MS;
  const n = Number(v);
  if (!(Number.isSafeInteger(n) && n >= 1 && n <= MAX_LOAD_MS)) throw new InvalidOptions(LOAD_ENV, `${JSON.stringify(v)} is not a whole number of ms from 1 to ${MAX_LOAD_MS}`);
  return n;
}

/** Options of loadAddon. */
export interface LoadAddonOptions {
  /** The bound on the import and register together, in ms (default addonLoadMs()). */
  readonly loadMs?: number;
}

/**
 * Loads an add-on by package name or path and lets it register: InvalidOptions('addon') when there is
 * no such add-on, it cannot be imported or exports no register; AddonError when its import and
 * register do not settle within the bound (an import that never settles would otherwise let the
 * process end, exit 0, as if it had finished), or register throws.
 */
export async function loadAddon(spec: string, registry: Registry, options: LoadAddonOptions = {}): Promise<void> {
  const loadMs = options.loadMs ?? addonLoadMs();
  const local = spec.startsWith('.') || isAbsolute(spec);
  const target = local ? pathToFileURL(resolve(spec)).href : spec;
  if (local && !existsSync(resolve(spec))) throw new InvalidOptions('addon', `no such add-on file ${spec}`);
  let timer: NodeJS.Timeout | undefined;
  let hook: 'load' | 'register' = 'load';
  // Not unref'd: this timer is what keeps the process alive while an import hangs on nothing.
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AddonError(spec, hook, `${hook === 'load' ? 'its import' : 'register'} did not settle within ${loadMs} ms (the bound: ${LOAD_ENV}, default ${DEFAULT_ADDON_LOAD_MS})`)), loadMs);
  });
  try {
    let mod: { register?: unknown };
    try {
      mod = (await Promise.race([import(target), late])) as { register?: unknown };
    } catch (e) {
      if (e instanceof AddonError) throw e;
      throw new InvalidOptions('addon', `cannot load the add-on ${spec}: ${messageOf(e)}`);
    }
    if (typeof mod.register !== 'function') throw new InvalidOptions('addon', `the add-on ${spec} exports no register(registry) function`);
    hook = 'register';
    const register = mod.register as (r: AddonRegistry) => unknown;
    await Promise.race([guard(spec, 'register', 'register', async () => register(scoped(spec, registry))), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Calls a hook; what it throws that is not the engine's typed error becomes an AddonError naming the
 * hook (`what`: the hook in words, its route or command named).
 */
async function guard<T>(addon: string, hook: AddonHook, what: string, f: () => Promise<T> | T): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof EngineError) throw e;
    throw new AddonError(addon, hook, `${what} threw ${messageOf(e)}`);
  }
}

/** The registry one add-on sees: what it adds is wrapped to name it. */
function scoped(addon: string, registry: Registry): AddonRegistry {
  return {
    addRoute: (route) => {
      registry.addRoute(route);
      registry.routes[registry.routes.length - 1] = guardedRoute(addon, route);
    },
    addCommand: (command) => {
      if (typeof command?.name !== 'string' || typeof command.run !== 'function') {
        throw new AddonError(addon, 'register', 'a command has a name string and a run function');
      }
      registry.addCommand(guardedCommand(addon, command));
    },
  };
}

/** A hook of a route in words: `the echo route's canServe`. */
type At = (hook: AddonHook) => string;

function guardedRoute(addon: string, route: ServeRoute): ServeRoute {
  const at: At = (hook) => `the ${route.modelType} route's ${hook}`;
  return {
    modelType: route.modelType,
    ...(route.optional !== undefined ? { optional: route.optional } : {}),
    canServe: async (dir) => {
      const answer = await guard(addon, 'canServe', at('canServe'), () => route.canServe(dir));
      if (answer === true || (typeof answer === 'object' && answer !== null && typeof answer.unavailable === 'string')) return answer;
      throw new AddonError(addon, 'canServe', `${at('canServe')} answered ${shown(answer)}, not true or { unavailable: reason }`);
    },
    open: async (dir, options) => {
      const model = await guard(addon, 'open', at('open'), () => route.open(dir, options));
      if (typeof model?.generate !== 'function') throw new AddonError(addon, 'open', `${at('open')} answered ${shown(model)}, not a model with a generate function`);
      return guardedModel(addon, at, model);
    },
  };
}

function guardedModel(addon: string, at: At, model: RouteModel): RouteModel {
  return {
    generate: (r) => ({
      [Symbol.asyncIterator]: () => {
        let it: AsyncIterator<number>;
        const call = async <T>(f: () => Promise<T> | T): Promise<T> => guard(addon, 'generate', at('generate'), f);
        return {
          next: () => call(() => (it ??= model.generate(r)[Symbol.asyncIterator]()).next()),
          return: async (v?: unknown) => (it?.return !== undefined ? call(() => it.return!(v)) : { done: true as const, value: v as number }),
        };
      },
    }),
    ...(model.close !== undefined ? { close: () => guard(addon, 'close', at('close'), () => model.close!()) } : {}),
  };
}

function guardedCommand(addon: string, command: AddonCommand): AddonCommand {
  const what = `the command ${command.name}`;
  return {
    name: command.name,
    description: command.description,
    run: async (args, out) => {
      const code: unknown = await guard(addon, 'command', what, () => command.run(args, out));
      if (!(typeof code === 'number' && Number.isInteger(code) && code >= 0 && code <= 255)) {
        throw new AddonError(addon, 'command', `${what} returned ${shown(code)}, not an exit code (a whole number from 0 to 255)`);
      }
      return code;
    },
  };
}
