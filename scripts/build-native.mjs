#!/usr/bin/env node
/**
 * Builds the native addons (binding.gyp) into build/Release/: host_kernels (the `host` target's CPU
 * kernels, src/native/host/; needs only a C++17 compiler, make and python3), and xrt_device over XRT
 * and ze_device over Level Zero, each only when its headers are found. src/devices/host/native.ts and
 * src/devices/native.ts load them from there. xdna2_sweep (the exhaustive contract sweep,
 * src/contracts/nativeSweep.ts) needs only a C++ compiler too and always builds with them.
 *
 *   node scripts/build-native.mjs            `npm run build:native`: builds host_kernels and every SDK
 *                                            addon whose headers it finds; exit 1 when the build fails
 *   node scripts/build-native.mjs --check    says what it would build, and from where; builds nothing
 *   node scripts/build-native.mjs --install  npm's install hook: builds host_kernels only (the XRT and
 *                                            Level Zero addons stay opt-in: NPU_OFFLOAD_BUILD_NATIVE=1
 *                                            builds everything, as build:native does). A failed host
 *                                            build never fails the install: it says why and how to
 *                                            build, and leaves the reason in build/host_kernels.failed.txt
 *                                            for the `host` target's NoDevice to quote
 *   node scripts/build-native.mjs --gyp Q    for binding.gyp: one answer (xrt-include, xrt-libs,
 *                                            ze-include, ze-libs), empty when not found (and always
 *                                            under NPU_OFFLOAD_HOST_ONLY=1); always exit 0
 *
 * Why an explicit `install` script at all: npm runs a bare `node-gyp rebuild` on install for any
 * package with a binding.gyp and no install script, which would fail the install on a machine without
 * a compiler. Here the install keeps working with only Node.js and npm; the `host` target then answers
 * NoDevice and the other targets serve as before.
 *
 * Where headers are looked for, first found wins (a directory DIR is a prefix: DIR/include, DIR/lib):
 *   XRT:         $NPU_OFFLOAD_XRT_DIR, $XILINX_XRT (each also DIR/opt/xilinx/xrt), pkg-config xrt, the include dirs of a Nix shell
 *                ($NIX_CFLAGS_COMPILE*, prefixes of $PATH entries), /opt/xilinx/xrt, /usr/local, /usr
 *                (Debian's libxrt-dev puts xrt/xrt_device.h under /usr/include/xrt)
 *   Level Zero:  $NPU_OFFLOAD_ZE_DIR, pkg-config libze_loader and level-zero, the Nix shell's as above,
 *                /usr/local, /usr
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SYSTEM_LIBDIRS = new Set(['/usr/lib', '/usr/lib64', '/lib', '/lib64', '/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu']);

/** Runs pkg-config over every pkg-config path a Nix shell or the user may have set; [] when absent. */
function pkgConfig(pkg, flag) {
  const env = { ...process.env };
  const paths = ['PKG_CONFIG_PATH', 'PKG_CONFIG_PATH_FOR_TARGET', 'PKG_CONFIG_PATH_FOR_BUILD']
    .map((k) => process.env[k]).filter((v) => v);
  if (paths.length > 0) env.PKG_CONFIG_PATH = paths.join(':');
  try {
    const out = execFileSync('pkg-config', [flag, pkg], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.split(/\s+/).filter((t) => t.length > 2).map((t) => t.slice(2));
  } catch {
    return [];
  }
}

/** Include directories a Nix dev shell exposes: -isystem/-I flags, and DIR/../include for DIR on PATH. */
function nixIncludes() {
  const dirs = [];
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('NIX_CFLAGS_COMPILE') || !v) continue;
    const t = v.split(/\s+/);
    for (let i = 0; i < t.length; i++) {
      if ((t[i] === '-isystem' || t[i] === '-I') && t[i + 1]) dirs.push(t[++i]);
      else if (t[i].startsWith('-I') && t[i].length > 2) dirs.push(t[i].slice(2));
    }
  }
  for (const p of (process.env.PATH ?? '').split(':')) {
    if (p.startsWith('/nix/store/') && p.endsWith('/bin')) dirs.push(join(p, '..', 'include'));
  }
  return dirs;
}

/** A candidate from a prefix directory: its include/ and lib/. */
const prefix = (dir) => ({ include: join(dir, 'include'), lib: join(dir, 'lib') });

/**
 * The first candidate holding `header` (relative to an include dir), also tried one level down in
 * `sub` (Debian's /usr/include/xrt/xrt/xrt_device.h). Answers the include dir to put on the path and
 * the library dir when one holds `lib`.
 */
function find(candidates, header, sub, lib) {
  for (const c of candidates) {
    for (const inc of [c.include, sub ? join(c.include, sub) : null]) {
      if (inc && existsSync(join(inc, header))) {
        const libdir = c.lib && existsSync(join(c.lib, lib)) ? c.lib : null;
        return { include: inc, lib: libdir };
      }
    }
  }
  return null;
}

function xrt() {
  const e = process.env;
  const c = [];
  // A prefix may be XRT's own (/opt/xilinx/xrt) or a package that keeps that tree inside it (some Nix
  // packagings: $out/opt/xilinx/xrt).
  for (const dir of [e.NPU_OFFLOAD_XRT_DIR, e.XILINX_XRT]) {
    if (dir) c.push(prefix(dir), prefix(join(dir, 'opt', 'xilinx', 'xrt')));
  }
  const libs = pkgConfig('xrt', '--libs-only-L');
  for (const inc of pkgConfig('xrt', '--cflags-only-I')) c.push({ include: inc, lib: libs[0] ?? null });
  for (const inc of nixIncludes()) c.push({ include: inc, lib: join(inc, '..', 'lib') });
  c.push(prefix('/opt/xilinx/xrt'), prefix('/usr/local'), prefix('/usr'));
  return find(c, 'xrt/xrt_device.h', 'xrt', 'libxrt_coreutil.so');
}

function levelZero() {
  const e = process.env;
  const c = [];
  if (e.NPU_OFFLOAD_ZE_DIR) c.push(prefix(e.NPU_OFFLOAD_ZE_DIR));
  for (const pkg of ['libze_loader', 'level-zero']) {
    const libs = pkgConfig(pkg, '--libs-only-L');
    // level-zero.pc says -I<prefix>/include/level_zero; the sources include <level_zero/ze_api.h>.
    for (const inc of pkgConfig(pkg, '--cflags-only-I')) c.push({ include: inc.replace(/\/level_zero\/?$/, ''), lib: libs[0] ?? null });
  }
  for (const inc of nixIncludes()) c.push({ include: inc, lib: join(inc, '..', 'lib') });
  c.push(prefix('/usr/local'), prefix('/usr'));
  return find(c, 'level_zero/ze_api.h', null, 'libze_loader.so');
}

/** Linker flags: the library, and its directory with an rpath when it is not the system's. */
function libFlags(found, name) {
  if (!found) return '';
  if (!found.lib || SYSTEM_LIBDIRS.has(found.lib)) return `-l${name}`;
  return `-L${found.lib} -Wl,-rpath,${found.lib} -l${name}`;
}

function gyp(query) {
  if (process.env.NPU_OFFLOAD_HOST_ONLY === '1') return;
  const answers = {
    'xrt-include': () => xrt()?.include ?? '',
    'xrt-libs': () => libFlags(xrt(), 'xrt_coreutil'),
    'ze-include': () => levelZero()?.include ?? '',
    'ze-libs': () => libFlags(levelZero(), 'ze_loader'),
  };
  const f = answers[query];
  process.stdout.write(f ? f() : '');
}

/** npm's bundled node-gyp: npm names it to its scripts; else the one beside this node's npm. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  for (const c of candidates) if (c && existsSync(c)) return c;
  try {
    const g = execFileSync('npm', ['root', '-g'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const p = join(g, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (existsSync(p)) return p;
  } catch { /* no npm on PATH */ }
  return null;
}

const HOST_HOW = 'build it with `npm run build:native` (needs a C++17 compiler, make and python3)';
const FAILED = join(root, 'build', 'host_kernels.failed.txt');

function report() {
  const x = xrt();
  const z = levelZero();
  console.log('host_kernels: always (a C++17 compiler, make and python3)');
  console.log('xdna2_sweep: always (the exhaustive contract sweep; a C++17 compiler)');
  console.log(`xrt_device: ${x ? `XRT headers in ${x.include}${x.lib ? `, libraries in ${x.lib}` : ''}` : 'skipped (no xrt/xrt_device.h found)'}`);
  console.log(`ze_device:  ${z ? `Level Zero headers in ${z.include}${z.lib ? `, libraries in ${z.lib}` : ''}` : 'skipped (no level_zero/ze_api.h found)'}`);
  return { x, z };
}

/**
 * Runs node-gyp's `steps` (rebuild, or configure then build); answers null on success, else why it
 * failed. `quiet` captures the output (npm hides an install script's output anyway).
 */
function nodeGypRun(steps, env, quiet) {
  const gypJs = nodeGyp();
  if (!gypJs) return 'node-gyp not found (it comes with npm); run this through `npm run build:native`';
  // Node's own headers, when this node was installed with them (Debian's nodejs: /usr/include/node), so
  // node-gyp need not download them.
  const nodePrefix = resolve(dirname(process.execPath), '..');
  const nodedir = !process.env.npm_config_nodedir && existsSync(join(nodePrefix, 'include', 'node', 'node_api.h')) ? [`--nodedir=${nodePrefix}`] : [];
  for (const step of steps) {
    const args = [gypJs, step, ...(step === 'configure' ? [] : ['--jobs=2']), ...nodedir];
    const r = spawnSync(process.execPath, args, { cwd: root, env, stdio: quiet ? 'pipe' : 'inherit', encoding: 'utf8' });
    if (r.status !== 0) return failureOf(step, r);
  }
  return null;
}

function failureOf(step, r) {
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const errors = out.split('\n').filter((l) => /error|not found|No such file/i.test(l) && !/^gyp (info|ERR! (stack|System|command|cwd|node -v|node-gyp -v|not ok))/.test(l));
  const why = errors.slice(0, 3).map((l) => l.trim()).join(' | ');
  return `node-gyp ${step} failed (exit ${r.status ?? r.signal})${why ? `: ${why}` : r.error ? `: ${r.error.message}` : ''}`;
}

function built() {
  return ['host_kernels', 'xdna2_sweep', 'xrt_device', 'ze_device'].filter((t) => existsSync(join(root, 'build', 'Release', `${t}.node`)));
}

function build() {
  report();
  const failure = nodeGypRun(['rebuild'], process.env, false);
  if (failure) {
    console.error(`build:native: ${failure}`);
    return 1;
  }
  rmSync(FAILED, { force: true });
  console.log(`build:native: built ${built().join(', ') || 'nothing'} into build/Release/`);
  return 0;
}

/** The install hook's build: host_kernels alone; a failure is reported and recorded, never fatal. */
function installHost() {
  // configure + build, not rebuild: a rebuild would first delete addons built earlier by build:native.
  const failure = nodeGypRun(['configure', 'build'], { ...process.env, NPU_OFFLOAD_HOST_ONLY: '1' }, true);
  if (!failure) {
    rmSync(FAILED, { force: true });
    console.log('npu-offload: built the host kernels (build/Release/host_kernels.node); the XRT and Level Zero addons stay opt-in (npm run build:native).');
    return;
  }
  const line = `the host kernels addon was not built on install: ${failure}`;
  try {
    mkdirSync(dirname(FAILED), { recursive: true });
    writeFileSync(FAILED, `${line}\n`);
  } catch { /* a read-only package directory: the message below still says it */ }
  console.warn(`npu-offload: ${line}. The \`host\` target answers NoDevice until it is built; ${HOST_HOW}. Nothing else needs it.`);
}

const [mode, query] = process.argv.slice(2);
if (mode === '--gyp') {
  gyp(query);
} else if (mode === '--check') {
  report();
} else if (mode === '--install') {
  if (process.env.NPU_OFFLOAD_BUILD_NATIVE === '1') process.exitCode = build();
  else installHost();
} else if (mode === undefined) {
  process.exitCode = build();
} else {
  console.error(`build-native: unknown option ${mode}`);
  process.exitCode = 2;
}
