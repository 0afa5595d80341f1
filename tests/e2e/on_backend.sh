#!/usr/bin/env bash
# Runs an end-to-end test for one backend, or reports it skipped (exit 77, with the reason) when
# this build's engine-run does not have that backend with a device.
#   on_backend.sh BACKEND ENGINE_RUN COMMAND [ARGS...]
set -uo pipefail
backend=$1 run=$2
shift 2
if ! "$run" --list-devices | grep -q "^$backend "; then
  echo "skipped: no $backend device in this build ($("$run" --list-devices | tail -n 1))"
  exit 77
fi
exec "$@"
