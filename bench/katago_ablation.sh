#!/usr/bin/env bash
# One arm of the KataGo ablation (BENCHMARKS.md): configs/ablation_9x9_cpu.py with one
# improvement switched off (or all of them: "baseline"), on one pinned core, for a fixed time.
#
#   bench/katago_ablation.sh ARM CORE SECONDS [WORKROOT]
#
# ARM: all | no_ownership_score | no_pooling | no_opponent | no_playout_cap | baseline, or the
# PUCT pair for forced playouts: puct_forced (all, PUCT search with forced playouts and policy
# target pruning) | puct (the same without them); give the pair a WORKROOT of its own.
# Two arms at once, one per core, get the same compute each.
set -euo pipefail
arm=$1 core=$2 seconds=$3 root=${4:-workdir/ablation}
off_ownership="--config.model.ownership_head=False --config.model.score_head=False"
off_pooling="--config.model.global_pooling=False"
off_opponent="--config.model.opponent_policy_head=False"
off_cap="--config.selfplay.playout_cap_randomization=False"
puct="--config.search.algorithm=puct"
case $arm in
  all) flags="" ;;
  no_ownership_score) flags=$off_ownership ;;
  no_pooling) flags=$off_pooling ;;
  no_opponent) flags=$off_opponent ;;
  no_playout_cap) flags=$off_cap ;;
  baseline) flags="$off_ownership $off_pooling $off_opponent $off_cap" ;;
  puct_forced) flags="$puct --config.search.forced_playouts=True" ;;
  puct) flags=$puct ;;
  *) echo "unknown arm $arm: all, no_ownership_score, no_pooling, no_opponent, no_playout_cap," \
          "baseline, puct_forced, puct" >&2
     exit 2 ;;
esac
mkdir -p "$root"
# shellcheck disable=SC2086
exec taskset -c "$core" python -m agz_jax.launch --config configs/ablation_9x9_cpu.py \
    --workdir "$root/$arm" --time_limit "$seconds" $flags
