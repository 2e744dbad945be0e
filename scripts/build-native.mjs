#!/usr/bin/env node
/**
 * Builds the native addons (binding.gyp: xrt_device over XRT, ze_device over Level Zero) into
 * build/Release/, each only when its headers are found; src/devices/native.ts loads them from there.
 * xdna2_sweep (the exhaustive contract sweep, src/contracts/nativeSweep.ts) needs no SDK and always builds.
 *
 *   node scripts/build-native.mjs            `npm run build:native`: builds what it finds (xdna2_sweep
 *                                            always); exit 1 when the build fails
 *   node scripts/build-native.mjs --check    says what it would build, and from where; builds nothing
 *   node scripts/build-native.mjs --install  npm's install hook: builds only with NPU_OFFLOAD_BUILD_NATIVE=1,
 *                                            else prints one line; never fails an install otherwise
 *   node scripts/build-native.mjs --gyp Q    for binding.gyp: one answer (xrt-include, xrt-libs,
 *                                            ze-include, ze-libs), empty when not found; always exit 0
 *
 * Why an explicit `install` script at all: npm runs `node-gyp rebuild` on install for any package with
 * a binding.gyp and no install script, which fails on a machine without the SDKs or a compiler. The
 * install keeps working with only Node.js and npm, and the simulators serve until a build exists.
 *
 * Where headers are looked for, first found wins (a directory DIR is a prefix: DIR/include, DIR/lib):
 *   XRT:         $NPU_OFFLOAD_XRT_DIR, $XILINX_XRT (each also DIR/opt/xilinx/xrt), pkg-config xrt, the include dirs of a Nix shell
 *                ($NIX_CFLAGS_COMPILE*, prefixes of $PATH entries), /opt/xilinx/xrt, /usr/local, /usr
 *                (Debian's libxrt-dev puts xrt/xrt_device.h under /usr/include/xrt)
 *   Level Zero:  $NPU_OFFLOAD_ZE_DIR, pkg-config libze_loader and level-zero, the Nix shell's as above,
 *                /usr/local, /usr
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

function report() {
  const x = xrt();
  const z = levelZero();
  console.log(`xrt_device: ${x ? `XRT headers in ${x.include}${x.lib ? `, libraries in ${x.lib}` : ''}` : 'skipped (no xrt/xrt_device.h found)'}`);
  console.log(`ze_device:  ${z ? `Level Zero headers in ${z.include}${z.lib ? `, libraries in ${z.lib}` : ''}` : 'skipped (no level_zero/ze_api.h found)'}`);
  return { x, z };
}

function build() {
  const { x, z } = report();
  // --- the exhaustive sweep's addon (issue 16): xdna2_sweep needs only a C++ compiler, so it always
  // builds, and a machine without either SDK still has something to build.
  console.log('xdna2_sweep: the exhaustive contract sweep (needs only a C++ compiler)');
  if (!x && !z) console.log('build:native: neither XRT nor Level Zero headers were found; building xdna2_sweep only (see README, "Native addons").');
  // --- end of the sweep's step
  const gypJs = nodeGyp();
  if (!gypJs) {
    console.error('build:native: node-gyp not found (it comes with npm); run this through `npm run build:native`.');
    return 1;
  }
  const args = [gypJs, 'rebuild'];
  // Node's own headers, when this node was installed with them (Debian's nodejs: /usr/include/node), so
  // node-gyp need not download them.
  const nodePrefix = resolve(dirname(process.execPath), '..');
  if (!process.env.npm_config_nodedir && existsSync(join(nodePrefix, 'include', 'node', 'node_api.h'))) args.push(`--nodedir=${nodePrefix}`);
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`build:native: node-gyp failed (exit ${r.status ?? r.signal})`);
    return 1;
  }
  const built = ['xrt_device', 'ze_device', 'xdna2_sweep'].filter((t) => existsSync(join(root, 'build', 'Release', `${t}.node`)));
  console.log(`build:native: built ${built.join(', ') || 'nothing'} into build/Release/`);
  return 0;
}

const [mode, query] = process.argv.slice(2);
if (mode === '--gyp') {
  gyp(query);
} else if (mode === '--check') {
  report();
} else if (mode === '--install') {
  if (process.env.NPU_OFFLOAD_BUILD_NATIVE === '1') process.exitCode = build();
  else console.log('npu-offload: native addons not built on install (npm run build:native, or NPU_OFFLOAD_BUILD_NATIVE=1); the simulators serve xdna2 and npu4.');
} else if (mode === undefined) {
  process.exitCode = build();
} else {
  console.error(`build-native: unknown option ${mode}`);
  process.exitCode = 2;
}
