# The native addons, built by `npm run build:native` (scripts/build-native.mjs), never by a plain
# `npm install`. Each target builds only when its SDK's headers are found (the script answers the
# paths below, empty when not found); otherwise it is type 'none' and src/devices/native.ts answers
# NoDevice for that kind. C++17, node-addon-api with C++ exceptions (NAPI_CPP_EXCEPTIONS): XRT's C++
# API reports failures by throwing, and the addons throw the JS NoDevice class the same way.
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
