#!/usr/bin/env bash
# Rates the arms of the KataGo ablation (bench/katago_ablation.sh): a round robin between
# their final networks on device (core 0) and each against GNU Go level 1 over GTP (core 1),
# all at a fixed number of simulations, then ratings anchored on GNU Go level 1.
#
#   bench/katago_rate.sh [WORKROOT] [OUT] [GAMES_PER_PAIR] [GAMES_VS_GNUGO] [SIMULATIONS]
set -euo pipefail
root=${1:-workdir/ablation} out=${2:-matches/ablation} pair_games=${3:-40}
gnugo_games=${4:-20} sims=${5:-32}
gnugo="/usr/games/gnugo --mode gtp --level 1 --chinese-rules --capture-all-dead --positional-superko"
arms=$(ls "$root")
mkdir -p "$out"
players=()
for arm in $arms; do players+=(--player "$arm=$root/$arm"); done
taskset -c 0 python -m agz_jax.tournament "${players[@]}" --games "$pair_games" \
    --simulations "$sims" --out "$out/round_robin" > "$out/round_robin.log" 2>&1 &
for arm in $arms; do
  taskset -c 1 python -m agz_jax.match --parallel 1 --games "$gnugo_games" --size 9 --komi 7.5 \
      --black "python -m agz_jax.gtp --checkpoint $root/$arm --simulations $sims --quiet" \
      --white "$gnugo" --names "$arm" gnugo-l1 --out "$out/${arm}_vs_gnugo1" \
      > "$out/${arm}_vs_gnugo1.log" 2>&1
done
wait
python -m agz_jax.ratings "$out"/round_robin "$out"/*_vs_gnugo1 --anchor gnugo-l1 --anchor-elo 0
