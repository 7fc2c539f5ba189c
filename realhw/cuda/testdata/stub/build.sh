#!/usr/bin/env bash
# Builds the no-device libcuda.so and libcudart.so stand-ins into $1 and
# prints the environment that compiles, links and runs realhw/cuda against
# them:  eval "$(realhw/cuda/testdata/stub/build.sh DIR)"
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
mkdir -p "$out"
cc -shared -fPIC -Wall -Werror -DDRIVER -I"$here" -o "$out/libcuda.so" "$here/nodevice.c"
cc -shared -fPIC -Wall -Werror -I"$here" -o "$out/libcudart.so" "$here/nodevice.c"
echo "export CGO_CFLAGS='-I$here' CGO_LDFLAGS='-L$out' LD_LIBRARY_PATH='$out'"
