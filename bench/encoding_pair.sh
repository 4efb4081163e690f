#!/usr/bin/env bash
# KataGo's inputs against AlphaGo Zero's 17 planes on 9x9 at equal wall-clock (BENCHMARKS.md):
# two runs of configs/zero_9x9_cpu.py, one after the other and alone on the machine, identical
# but for the encoding; then their last checkpoints head to head and each against GNU Go level
# 10 at 1 s a move (PUCT, a tree on each core), and both runs' checkpoints rated together
# against training time in one picture. The head-to-head pairs start from two random moves
# (--random-openings): without them the two engines, which search alike each time, replay
# the same few games.
#
#   bench/encoding_pair.sh train SECONDS [ROOT] [RUN...]   # the runs (agz17 katago), SECONDS each
#   bench/encoding_pair.sh train-pinned SECONDS [ROOT] [FLAG...]  # both at once, a core each
#   bench/encoding_pair.sh match [ROOT] [OUT] [H2H_GAMES] [GNUGO_GAMES] [PARALLEL]
#                                                          # 60 and 40 games, 1 at a time
#   bench/encoding_pair.sh curve [ROOT] [OUT] [EVERY_NTH_CHECKPOINT] [GAMES_PER_PAIR]
#   bench/encoding_pair.sh sl19 STEPS [ROOT] [OUT] [EVAL_EVERY]   # 19x19 from human games
#
# The runs are ROOT/agz17 and ROOT/katago (katago_noladders: the ladder planes cost KataGo's
# encoding 20x on 9x9, BENCHMARKS.md); ROOT defaults to workdir/encodings, OUT to
# matches/encodings. Each phase resumes where it stopped: a run from its checkpoint (give it the
# seconds left), a match from its results file. `sl19` trains configs/sl_dual_19x19.py on the
# imported human games (data/human) once with each encoding for the same steps, one after the
# other (ROOT/sl19_agz17, ROOT/sl19_katago), measuring the held-out top-1 and value MSE every
# EVAL_EVERY steps (the config's 1000 by default), and draws both runs' curves in OUT.
#
# Half the wall-clock for the same compute: `train-pinned` trains both runs at the same time,
# each on one device pinned to its own core (taskset), for SECONDS; `match ... 2` plays two
# games at once, each engine on one device (one core) instead of a tree on each core. FLAGs go
# to both runs' launch (--config.checkpoint.every=20: more points on the Elo curve of a short run).
set -euo pipefail
phase=${1:?train, train-pinned, match, curve or sl19}
shift
declare -A encoding=([agz17]=agz17 [katago]=katago_noladders)
gnugo10="/usr/games/gnugo --mode gtp --level 10 --chinese-rules --capture-all-dead --positional-superko --seed {seed}"
engine() {  # the GTP engine of a run's last checkpoint at 1 s a move [on $2 CPU devices]
  echo "python -m agz_jax.gtp --checkpoint $1 --algorithm puct --seconds-per-move 1 --seed {seed} --quiet${2:+ --cpu-devices $2}"
}
case $phase in
  train)
    seconds=${1:?seconds per run} root=${2:-workdir/encodings}
    shift $(( $# < 2 ? $# : 2 ))
    [ $# -gt 0 ] || set -- agz17 katago
    for run in "$@"; do
      [ -n "${encoding[$run]:-}" ] || { echo "unknown run $run: agz17 or katago" >&2; exit 2; }
      python -m agz_jax.launch --config configs/zero_9x9_cpu.py --workdir "$root/$run" \
          --time_limit "$seconds" --config.model.encoding="${encoding[$run]}"
    done ;;
  train-pinned)
    seconds=${1:?seconds per run} root=${2:-workdir/encodings} core=0 pids=()
    shift $(( $# < 2 ? $# : 2 ))
    mkdir -p "$root"
    for run in agz17 katago; do
      taskset -c "$core" python -m agz_jax.launch --config configs/zero_9x9_cpu.py \
          --workdir "$root/$run" --time_limit "$seconds" --config.mesh.cpu_devices=1 \
          --config.model.encoding="${encoding[$run]}" "$@" > "$root/$run.log" 2>&1 &
      pids+=($!) core=$((core + 1))
    done
    status=0
    for pid in "${pids[@]}"; do wait "$pid" || status=$?; done
    tail -n 3 "$root/agz17.log" "$root/katago.log"
    exit $status ;;
  match)
    root=${1:-workdir/encodings} out=${2:-matches/encodings} h2h=${3:-60} vs=${4:-40}
    parallel=${5:-1} devices=""
    [ "$parallel" = 1 ] || devices=1
    mkdir -p "$out"
    python -m agz_jax.match --names agz17 katago --black "$(engine "$root/agz17" $devices)" \
        --white "$(engine "$root/katago" $devices)" --games "$h2h" --size 9 --komi 7.5 \
        --parallel "$parallel" --random-openings 2 --seed 0 --out "$out/agz17_vs_katago"
    for run in agz17 katago; do
      python -m agz_jax.match --names "$run" gnugo-l10 --black "$(engine "$root/$run" $devices)" \
          --white "$gnugo10" --games "$vs" --size 9 --komi 7.5 --parallel "$parallel" \
          --seed 100 --out "$out/${run}_vs_gnugo10"
    done ;;
  curve)
    root=${1:-workdir/encodings} out=${2:-matches/encodings} every=${3:-1} pair_games=${4:-16}
    players=() anchor=""
    for run in agz17 katago; do
      steps=$(ls "$root/$run/checkpoints" | grep -E '^[0-9]+$' | sort -n)
      last=$(echo "$steps" | tail -1)
      for s in $( (echo "$steps" | awk -v k="$every" 'NR % k == 0'; echo "$last") | sort -nu); do
        players+=(--player "$run@$s=$root/$run/checkpoints/$s")
        anchor=${anchor:-$run@$s}
      done
    done
    mkdir -p "$out"
    # One round robin of both runs' checkpoints at 32 simulations (Gumbel, as they trained),
    # the first rated checkpoint of the agz17 run at 0.
    python -m agz_jax.tournament "${players[@]}" --games "$pair_games" --simulations 32 \
        --out "$out/round_robin"
    python -m agz_jax.ratings "$out/round_robin" --anchor "$anchor" --json "$out/ratings.json"
    python -m agz_jax.plot --workdir "$root/agz17" --workdir "$root/katago" \
        --ratings "$out/ratings.json" --out "$out" ;;
  sl19)
    steps=${1:?steps per run} root=${2:-workdir/encodings} out=${3:-matches/encodings/sl19}
    every=${4:-1000}
    [ -d data/human ] || { echo "no data/human: import the human games first, as" \
        "configs/sl_dual_19x19.py says" >&2; exit 2; }
    for run in agz17 katago; do
      python -m agz_jax.launch --config configs/sl_dual_19x19.py --workdir "$root/sl19_$run" \
          --config.steps="$steps" --config.model.encoding="${encoding[$run]}" \
          --config.eval.every="$every"
    done
    python -m agz_jax.plot --workdir "$root/sl19_agz17" --workdir "$root/sl19_katago" --out "$out" ;;
  *) echo "unknown phase $phase: train, train-pinned, match, curve or sl19" >&2; exit 2 ;;
esac
