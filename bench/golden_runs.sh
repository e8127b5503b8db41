#!/bin/bash
# Golden runs: the same scripted runs with two checkouts, diffed (issue 12 §6). Writes only under $D (/tmp).
#   bench/golden_runs.sh BEFORE_PYTHON BEFORE_SRC AFTER_PYTHON AFTER_SRC
# e.g. bench/golden_runs.sh /work/main/.venv/bin/python /work/main/src /tmp/venv-r/bin/python src
set -u
before_py=$1 before_src=$2 after_py=$3 after_src=$4
D=${D:-$(mktemp -d /tmp/golden.XXXXXX)}
status=0
mkdir -p "$D/before" "$D/after"
run() {  # side python src out args...
  local py=$1 src=$2 out=$3
  shift 3
  PYTHONPATH=$src "$py" -m empathybench run --out "$out" --no-cache -q "$@" >/dev/null 2>"$out.err" || echo "failed: $out"
}
for name in eqbench seceu giebench emotionbench empathetic; do
  for model in scripted/plausible scripted/plausible-2; do
    args=(--model "$model" --bench "$name" --preset quick --limit 4)
    tag="$name-${model#scripted/}"
    run "$before_py" "$before_src" "$D/before/$tag" "${args[@]}"
    run "$after_py" "$after_src" "$D/after/$tag" "${args[@]}"
    "$after_py" "$(dirname "$0")/compare_summaries.py" "$D/before/$tag" "$D/after/$tag" || status=1
  done
done
run "$before_py" "$before_src" "$D/before/empathetic-judge" --model scripted/plausible --judge scripted/plausible-3 --bench empathetic --preset quick --limit 4
run "$after_py" "$after_src" "$D/after/empathetic-judge" --model scripted/plausible --judge scripted/plausible-3 --bench empathetic --preset quick --limit 4
"$after_py" "$(dirname "$0")/compare_summaries.py" "$D/before/empathetic-judge" "$D/after/empathetic-judge" || status=1
exit $status
