#!/usr/bin/env bash
# Integration test of `conspirator sweep --emit slurm` on a real single-node
# Slurm: installs Debian's slurm-wlm and munge (as root, with apt-get), then
# the Go test starts munged, slurmctld and slurmd on 127.0.0.1 (no systemd),
# submits the emitted job array, kills and reruns one task, and stops every
# daemon it started by its own pid. Skips, saying why, where the packages
# cannot be installed or the user is not root.
set -euo pipefail
cd "$(dirname "$0")/.."

have_all() {
  for c in munged mungekey slurmctld slurmd sbatch sinfo scancel; do
    command -v "$c" >/dev/null 2>&1 || return 1
  done
}

if [ "$(id -u)" != 0 ]; then
  echo "== SKIP slurm integration test: needs root (the test runs slurmctld, slurmd and munged as root)"
  exit 0
fi
if ! have_all; then
  if command -v apt-get >/dev/null 2>&1; then
    echo "== apt-get install slurm-wlm munge"
    export DEBIAN_FRONTEND=noninteractive
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null; }; then
      echo "== SKIP slurm integration test: apt-get could not install slurm-wlm and munge"
      exit 0
    fi
  fi
fi
if ! have_all; then
  echo "== SKIP slurm integration test: slurm-wlm and munge are not installed and there is no apt-get to install them"
  exit 0
fi

echo "== go vet -tags slurm ./sim/batch/"
go vet -tags slurm ./sim/batch/
echo "== go test -tags slurm -run Slurm -v ./sim/batch/   (a real Slurm on 127.0.0.1)"
go test -tags slurm -run Slurm -count=1 -timeout 5m -v ./sim/batch/
