#!/usr/bin/env bash
# Builds the no-device libcuda.so and libcudart.so stand-ins into $1 and
# prints the environment that compiles, links and runs realhw/cuda against
# them:  eval "$(realhw/cuda/testdata/stub/build.sh DIR)"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
mkdir -p "$out"
# With SONAMES=1 the stand-ins carry the real libraries' sonames
# (libcuda.so.1, libcudart.so.$CUDART_MAJOR, default 13), so that a binary
# linked against them here loads the real ones on a GPU machine
# (realhw/cuda/device-check.sh build).
drv=() rt=()
if [ "${SONAMES:-0}" = 1 ]; then
  drv=(-Wl,-soname,libcuda.so.1)
  rt=(-Wl,-soname,libcudart.so.${CUDART_MAJOR:-13})
fi
cc -shared -fPIC -Wall -Werror -DDRIVER -I"$here" "${drv[@]}" -o "$out/libcuda.so" "$here/nodevice.c"
cc -shared -fPIC -Wall -Werror -I"$here" "${rt[@]}" -o "$out/libcudart.so" "$here/nodevice.c"
echo "export CGO_CFLAGS='-I$here' CGO_LDFLAGS='-L$out' LD_LIBRARY_PATH='$out'"
