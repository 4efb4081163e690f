"""One way to build every kind of player: load_player(spec)."""

import os

from agz_jax import nets
from agz_jax.players import alphago_player
from agz_jax.players.network import Network
from agz_jax.players.policy_player import PolicyPlayer
from agz_jax.players.random_player import RandomPlayer
from agz_jax.players.search_player import Rollouts, SearchPlayer


# A search player's settings when the command line says nothing.
SIMULATIONS = 64
CONSIDERED_ACTIONS = 16


def load_player(spec: str, *, simulations: int = SIMULATIONS, algorithm: str | None = None, seed: int = 0,
                sample_moves: int = 0, reuse_tree: bool = True, policy_only: bool = False,
                considered_actions: int = CONSIDERED_ACTIONS, q_transform: str | None = None,
                search_settings: dict | None = None, leaves: int | None = None,
                rollouts: Rollouts | None = None, stop_when_decided: bool = False):
  """A player from its description.

  Args:
    spec: 'random', a training workdir or checkpoint directory, or an AlphaGo
      player: a bundle folder (with alphago.json) or 'alphago:key=value,...'
      (players.alphago_player).
    simulations: searches per move; 0 plays the policy.
    algorithm: 'gumbel' or 'puct' (default: the training run's).
    seed: PRNG seed of the random moves, the search's noise or the sampled moves.
    sample_moves: a policy player draws the first `sample_moves` moves from its policy.
    reuse_tree: a PUCT search starts from the subtree of the position reached.
    policy_only: play the network's policy without search.
    considered_actions: Gumbel search: actions kept at the root.
    q_transform: PUCT search: 'siblings' or 'bounded' (search.SearchConfig.q_transform;
      default: the training run's).
    search_settings: PUCT search: other search.SearchConfig fields for play (first_play,
      fpu_reduction, pb_c_init; default: the training run's).
    leaves: PUCT and AlphaGo search: leaves of a tree evaluated together under a virtual
      loss (default: 1, or an AlphaGo bundle's "leaves").
    rollouts: PUCT search of a Go network: leaves valued by rollouts of a fast policy too
      (players.Rollouts); an AlphaGo bundle says its own (its rollout and lambda keys).
    stop_when_decided: PUCT and AlphaGo search given seconds: stop once the most visited move
      can no longer be overtaken in the time left.

  Returns:
    A RandomPlayer; an AlphaGoPlayer; a PolicyPlayer for an SL policy network
    (it has no value to search with), with `policy_only` or without
    simulations; else a SearchPlayer.

  Raises:
    FileNotFoundError: no checkpoint at `spec`.
    ValueError: a bundle or spec that does not read.
  """
  given = (sorted(search_settings or {}) + (["leaves"] if (leaves or 1) > 1 else [])
           + (["rollouts"] if rollouts is not None else [])
           + (["stop_when_decided"] if stop_when_decided else [])
           + [name for name, value in (("algorithm", algorithm), ("q_transform", q_transform))
              if value is not None])
  settings = f"search settings ({', '.join(given)})"
  if spec == "random":
    if given:
      raise ValueError(f"{settings} are for a network that searches, not the random player: "
                       f"drop them")
    return RandomPlayer(seed)
  if alphago_player.is_bundle(spec):
    if rollouts is not None:
      raise ValueError("an AlphaGo player's rollouts are its own settings (rollout=DIR, lambda, "
                       "lambda_from_move, rollouts_per_leaf): give them there")
    bundle = alphago_player.read_bundle(spec)
    settings = dict(search_settings or {})
    if "pb_c_init" in settings:  # the 2016 search's exploration constant
      bundle["c_puct"] = float(settings.pop("pb_c_init"))
    foreign = sorted(settings) + [name for name, value in (("algorithm", algorithm),
                                                          ("q_transform", q_transform))
                                  if value is not None]
    if foreign:
      raise ValueError(f"the AlphaGo player's search (the 2016 paper's) has no {', '.join(foreign)}; "
                       f"drop them (it takes c_puct, leaves and its bundle's keys)")
    return alphago_player.AlphaGoPlayer(bundle, simulations=simulations,
                                        seed=seed, reuse_tree=reuse_tree, leaves=leaves,
                                        stop_when_decided=stop_when_decided)
  network = Network.from_checkpoint(spec)
  if network.config.model.kind in nets.VALUE_ONLY:
    raise ValueError(f"{spec} is a value network, which has no moves to play: it values "
                     "positions inside an AlphaGo search, not alone")
  if policy_only or simulations <= 0 or not network.has_value:
    if given:
      raise ValueError(f"{settings} are for a player that searches; drop them or give it "
                       f"simulations and a value")
    return PolicyPlayer(network, seed=seed, sample_moves=sample_moves)
  return SearchPlayer(network, simulations=simulations, algorithm=algorithm, seed=seed,
                      considered_actions=considered_actions, reuse_tree=reuse_tree,
                      q_transform=q_transform, search_settings=search_settings,
                      leaves=leaves or 1, rollouts=rollouts,
                      stop_when_decided=stop_when_decided)


def pretrained_path(name: str) -> str:
  """The folder of a network the repository ships in pretrained/ (an editable install's).

  Raises:
    FileNotFoundError: no such network, naming those there are.
  """
  folder = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
      __file__)))), "pretrained")
  path = os.path.join(folder, name)
  if not name or os.sep in name or not os.path.isdir(path):
    have = sorted(d for d in os.listdir(folder) if not d.startswith(".")) if os.path.isdir(folder) else []
    raise FileNotFoundError(
        f"no pretrained network {name!r}" + (f"; there are: {', '.join(have)}" if have else
                                             ": pretrained networks ship with the repository "
                                             "(clone it and pip install -e .)"))
  return path
