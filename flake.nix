{
  description = "npu-offload: run small ML programs on AMD XDNA2 and Intel NPU4, checked against a CPU oracle";

  # Nix does not run on the machines this project is developed on; these shells are written against
  # nixpkgs' own attribute names (nodejs_20, xrt, xrt-lib-with-xdna, level-zero, intel-npu-driver) and
  # are the supported way to get the native toolchains on a machine with the hardware.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      common = pkgs: [
        pkgs.nodejs_20
        pkgs.python3
        pkgs.python3Packages.numpy
        pkgs.pkg-config
        pkgs.gnumake
        pkgs.gcc
        pkgs.sqlite
      ];
    in
    {
      devShells = forAll (pkgs: {
        # The CPU target, the simulators and the tests: what CI needs.
        default = pkgs.mkShell {
          packages = common pkgs;
        };

        # AMD XDNA2: XRT with the amdxdna shim plugin (xrt-smi examine lists the NPU).
        npu = pkgs.mkShell {
          packages = common pkgs ++ [
            pkgs.xrt
            pkgs.xrt-lib-with-xdna
          ];
          shellHook = ''
            export XILINX_XRT=${pkgs.xrt-lib-with-xdna}
          '';
        };

        # Intel NPU4 (Lunar Lake): the Level Zero loader and the NPU user-mode driver with its compiler.
        npu-intel = pkgs.mkShell {
          packages = common pkgs ++ [
            pkgs.level-zero
            pkgs.intel-npu-driver
          ];
          shellHook = ''
            export ZE_ENABLE_LOADER_DEBUG_TRACE=0
          '';
        };
      });
    };
}
