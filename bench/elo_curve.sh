#!/usr/bin/env bash
# The Elo curve of a training run against wall time: a round robin between its
# checkpoints on device (core 0), each checkpoint against GNU Go level 1 over GTP
# (core 1), all at a fixed number of simulations; ratings anchored on GNU Go level 1
# (plus any extra match folders, e.g. GNU Go level 1 against level 10), then the plot.
#
#   bench/elo_curve.sh RUN OUT [EVERY_NTH_CHECKPOINT] [GAMES_PER_PAIR] [GAMES_VS_GNUGO] \
#       [SIMULATIONS] [EXTRA_MATCH_DIR...]
set -euo pipefail
run=$1 out=$2 every=${3:-2} pair_games=${4:-16} gnugo_games=${5:-10} sims=${6:-32}
shift $(( $# < 6 ? $# : 6 ))
name=$(basename "$run")
gnugo="/usr/games/gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead --positional-superko"
steps=$(ls "$run/checkpoints" | grep -E '^[0-9]+$' | sort -n)
last=$(echo "$steps" | tail -1)
# Every EVERY-th checkpoint, and the last one.
picked=$( (echo "$steps" | awk -v k="$every" 'NR % k == 0'; echo "$last") | sort -nu)
mkdir -p "$out"
players=()
for s in $picked; do players+=(--player "$name@$s=$run/checkpoints/$s"); done
taskset -c 0 python -m agz_jax.tournament "${players[@]}" --games "$pair_games" \
    --simulations "$sims" --out "$out/round_robin" > "$out/round_robin.log" 2>&1 &
for s in $picked; do
  taskset -c 1 python -m agz_jax.match --parallel 1 --games "$gnugo_games" --size 9 --komi 7.5 \
      --black "python -m agz_jax.gtp --checkpoint $run/checkpoints/$s --simulations $sims --quiet" \
      --white "$gnugo" --names "$name@$s" gnugo-l1 --out "$out/${s}_vs_gnugo1" \
      > "$out/${s}_vs_gnugo1.log" 2>&1
done
wait
python -m agz_jax.ratings "$out"/round_robin "$out"/*_vs_gnugo1 "$@" --anchor gnugo-l1 \
    --anchor-elo 0 --json "$out/ratings.json"
python -m agz_jax.plot --workdir "$run" --ratings "$out/ratings.json" --out "$out"
