#!/usr/bin/env bash
# Checks the CMake install scripts/setup.sh made (the commands of docs/build.md
# as written, build folder build/, GNU Radio's prefix), then that
# `cmake --build build --target uninstall` removes it and `cmake --install build`
# puts it back:
#   1. build/ was configured with the distribution's pybind11 (Debian 12:
#      2.10.3 in /usr/lib/cmake/pybind11), the venv's build with pip's;
#   2. install_manifest.txt holds _core, one fatbin per kernels/*.cu, every
#      grc/*.block.yml and every python/gnuradio/gpuldpc/*.py;
#   3. uninstall removes every file of it (and GNU Radio's Python no longer
#      imports gnuradio.gpuldpc); a reinstall restores them all.
#
#   bash scripts/check_cmake_install.sh     (as root, after scripts/setup.sh; CI runs it)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
manifest=build/install_manifest.txt
fail() { echo "check_cmake_install: $*" >&2; exit 1; }
[ -s "$manifest" ] || fail "no $manifest: run bash scripts/setup.sh (as root) first"

# cache_value <CMakeCache.txt> <NAME>
cache_value() { sed -n "s/^$2:[A-Z]*=//p" "$1"; }
pybind11_version() { sed -n 's/^set(PACKAGE_VERSION "\(.*\)")/\1/p' "$1/pybind11ConfigVersion.cmake"; }
system_pybind11=$(cache_value build/CMakeCache.txt pybind11_DIR)
case "$system_pybind11" in
    "$root"/*) fail "build/ was configured with pybind11 from $system_pybind11, not the distribution's" ;;
esac
venv_pybind11=$(cache_value build/cp*/CMakeCache.txt pybind11_DIR)
case "$venv_pybind11" in
    "$root"/.venv/*) ;;
    *) fail "the venv's build used pybind11 from $venv_pybind11, not the venv's" ;;
esac
echo "check_cmake_install: pybind11 $(pybind11_version "$system_pybind11") ($system_pybind11) built build/," \
     "pybind11 $(pybind11_version "$venv_pybind11") (the venv's) built build/cp*"

expected=("/gpuldpc/_core\..*\.so" "/gnuradio/gpuldpc/__init__\.py")
for cu in kernels/*.cu; do expected+=("/gpuldpc/kernels/$(basename "$cu" .cu)\.fatbin"); done
for yml in grc/*.block.yml; do expected+=("/share/gnuradio/grc/blocks/$(basename "$yml")"); done
for py in python/gnuradio/gpuldpc/*.py; do expected+=("/gnuradio/gpuldpc/$(basename "$py")"); done
for pattern in "${expected[@]}"; do
    grep -q "$pattern\$" "$manifest" || fail "$manifest lists nothing matching $pattern"
done
files=$(grep -c "" "$manifest")

# in_clean_env <command>...: as a GNU Radio user: no environment variables
in_clean_env() { env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" LANG=C.UTF-8 "$@"; }
gr_imports_blocks() { (cd /tmp && in_clean_env /usr/bin/python3 -c "from gnuradio import gpuldpc" 2>/dev/null); }
gr_imports_blocks || fail "/usr/bin/python3 does not import gnuradio.gpuldpc"

cmake --build build --target uninstall
while read -r file; do
    [ ! -e "$file" ] || fail "uninstall left $file"
done < "$manifest"
! gr_imports_blocks || fail "/usr/bin/python3 still imports gnuradio.gpuldpc after the uninstall"

cmake --install build > /dev/null
while read -r file; do
    [ -e "$file" ] || fail "the reinstall did not restore $file"
done < "$manifest"
gr_imports_blocks || fail "/usr/bin/python3 does not import gnuradio.gpuldpc after the reinstall"
echo "check_cmake_install: OK: the $files files of $manifest (${#expected[@]} checked by name)" \
     "were uninstalled and installed again"
