#!/usr/bin/env bash
# Fails if any ELF executable or shared library under the build directory links libcuda:
# the driver is opened with dlopen, so every binary must start on machines without a GPU.
set -euo pipefail
build=${1:?usage: check_no_libcuda.sh BUILD_DIR}
checked=0
bad=0
while IFS= read -r -d '' f; do
  [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || continue
  # ldd lists direct and transitive dependencies (a missing libcuda shows as "not found").
  if ldd "$f" 2>/dev/null | grep -q 'libcuda\.so'; then
    echo "links libcuda: $f"
    bad=1
  fi
  checked=$((checked + 1))
done < <(find "$build" -type f \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) \
           -not -path '*/CMakeFiles/*' -print0)
echo "checked $checked binaries for a libcuda dependency"
[ "$checked" -gt 0 ] || { echo "no binaries found under $build"; exit 1; }
exit $bad
