#!/usr/bin/env bash
# Replays llama.cpp's reference on a model the project synthesizes: writes the model from the
# reference's NAME.args (engine-gguf synth flags), checks it is byte for byte the file llama.cpp
# ran (NAME.sha256), then replays NAME.jsonl on the backend.
#   replay_synth.sh ENGINE_GGUF ENGINE_RUN REFERENCE.jsonl BACKEND WORK_DIR
set -euo pipefail
gguf=$1 run=$2 ref=$3 backend=$4 work=$5
name=$(basename "$ref" .jsonl)
dir=$(dirname "$ref")
model="$work/$name.gguf"
mkdir -p "$work"
# shellcheck disable=SC2046  # the flags are words
"$gguf" synth -o "$model" $(cat "$dir/$name.args") > /dev/null
expected=$(cut -d' ' -f1 "$dir/$name.sha256")
written=$(sha256sum "$model" | cut -d' ' -f1)
if [ "$expected" != "$written" ]; then
  echo "FAIL: $model is not the file the reference was computed on (SHA-256 $written, expected $expected): the synthesizer changed, so $name's reference must be made again (docs/models.md)"
  exit 1
fi
exec "$run" -m "$model" --replay "$ref" --replay-out "$work/$name.$backend.replay.jsonl" -t 2 --backend "$backend"
