# The native addons, built by scripts/build-native.mjs. host_kernels (the `host` target's CPU kernels,
# src/native/host/) needs only a C++ compiler and is built by `npm ci` / `npm install` too; a failed
# build there does not fail the install. The XRT and Level Zero addons build only under `npm run
# build:native`, and only when their SDK's headers are found (the script answers the paths below,
# empty when not found, and always empty on install); otherwise they are type 'none' and
# src/devices/native.ts answers NoDevice for that kind. C++17, node-addon-api with C++ exceptions
# (NAPI_CPP_EXCEPTIONS): XRT's C++ API reports failures by throwing, and the addons throw the JS
# error classes the same way.
{
  'variables': {
    'xrt_include%': '<!(node scripts/build-native.mjs --gyp xrt-include)',
    'ze_include%': '<!(node scripts/build-native.mjs --gyp ze-include)',
  },
  'target_defaults': {
    'cflags_cc': [ '-std=c++17' ],
    'defines': [ 'NAPI_VERSION=8', 'NODE_ADDON_API_DISABLE_DEPRECATED' ],
    'dependencies': [ "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except" ],
  },
  'targets': [
    {
      # Built for the baseline of the machine's architecture: the AVX2 and AVX-512 paths are compiled
      # per function by target pragmas (isaAvx2.cc, isaAvx512.cc) and chosen at run time by cpuid.
      # No FMA contraction: where a kernel fuses, it says so with an intrinsic, so the scalar path's
      # rounding is the one its source spells.
      'target_name': 'host_kernels',
      'sources': [
        'src/native/host/addon.cc', 'src/native/host/state.cc', 'src/native/host/weight.cc',
        'src/native/host/list.cc', 'src/native/host/listCheck.cc', 'src/native/host/matmul.cc', 'src/native/host/ops.cc',
        'src/native/host/dequant.cc', 'src/native/host/team.cc', 'src/native/host/cpu.cc',
        'src/native/host/wtypes.cc', 'src/native/host/isaScalar.cc', 'src/native/host/isaAvx2.cc',
        'src/native/host/isaAvx512.cc', 'src/native/host/typed.cc', 'src/native/host/attention.cc',
      ],
      'cflags_cc': [ '-O3', '-ffp-contract=off', '-pthread' ],
      'ldflags': [ '-pthread' ],
      'xcode_settings': { 'OTHER_CPLUSPLUSFLAGS': [ '-std=c++17', '-O3', '-ffp-contract=off' ] },
    },
    {
      'target_name': 'xrt_device',
      'conditions': [
        [ 'xrt_include==""', { 'type': 'none' }, {
          'sources': [ 'src/native/xrtAddon.cc', 'src/native/xrtDevice.cc', 'src/native/errorClasses.cc' ],
          'include_dirs': [ '<(xrt_include)' ],
          'libraries': [ '<!@(node scripts/build-native.mjs --gyp xrt-libs)' ],
        } ],
      ],
    },
    {
      'target_name': 'ze_device',
      'conditions': [
        [ 'ze_include==""', { 'type': 'none' }, {
          'sources': [ 'src/native/zeAddon.cc', 'src/native/zeDevice.cc', 'src/native/errorClasses.cc' ],
          'include_dirs': [ '<(ze_include)' ],
          'libraries': [ '<!@(node scripts/build-native.mjs --gyp ze-libs)' ],
        } ],
      ],
    },
    # The exhaustive contract sweep (issue 16; src/native/sweep/, loaded by src/contracts/nativeSweep.ts):
    # the XDNA2 core's arithmetic and the f64 references. It needs only a C++ compiler, so it always
    # builds. -ffp-contract=off: a fused multiply-add would skip a rounding the simulated core makes.
    # wide.cc holds AVX-512 routines behind a run-time CPU check; the rest is plain x86-64 (or any ISA).
    {
      'target_name': 'xdna2_sweep',
      'sources': [ 'src/native/sweep/sweepAddon.cc', 'src/native/sweep/sweep.cc', 'src/native/sweep/wide.cc' ],
      'cflags_cc': [ '-O3', '-ffp-contract=off', '-fno-fast-math', '-Wno-psabi' ],
    },
  ],
}
