"""The public surface and the seams: the package's exports, the game protocol (Go and a toy
game where a player moves twice), import boundaries, and old checkpoints' configs."""

import ast
import glob
import os
import subprocess
import sys
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import agz_jax
from agz_jax import alphago, arena, checkpoint, game, go, search

import helpers
import toy_game

PACKAGE = os.path.dirname(os.path.abspath(agz_jax.__file__))


def test_the_public_surface_is_pinned():
  assert sorted(agz_jax.__all__) == [
      "Evaluator", "Game", "ReplayBuffer", "SearchConfig", "SelfPlayConfig", "TASKS", "alphago",
      "arena", "game", "go", "nets", "replay", "run_search", "search", "selfplay",
      "train_and_evaluate", "training"]
  for name in agz_jax.__all__:
    assert getattr(agz_jax, name) is not None, name
  assert set(agz_jax.TASKS) == {"selfplay", "sl_policy", "sl_dual", "rollout_policy",
                                "rl_policy", "value"}
  assert callable(agz_jax.train_and_evaluate)
  with pytest.raises(AttributeError, match="no attribute 'trainer'"):
    getattr(agz_jax, "trainer")


def test_importing_the_package_does_not_load_checkpointing():
  code = ("import sys, agz_jax, agz_jax.demo; "
          "assert not [m for m in sys.modules if m.startswith('orbax')], 'orbax loaded'")
  proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr


def _imports(path):
  """Modules a source file imports (absolute names; `from a import b` gives a.b and a)."""
  tree = ast.parse(open(path, encoding="utf-8").read())
  names = set()
  for node in ast.walk(tree):
    if isinstance(node, ast.Import):
      names.update(a.name for a in node.names)
    elif isinstance(node, ast.ImportFrom) and node.module:
      names.add(node.module)
      names.update(f"{node.module}.{a.name}" for a in node.names)
  return names


def _sources(folder=""):
  return sorted(glob.glob(os.path.join(PACKAGE, folder, "**", "*.py"), recursive=True))


def test_import_boundaries():
  for path in _sources():
    rel = os.path.relpath(path, PACKAGE)
    imports = _imports(path)
    ours = {m for m in imports if m.startswith("agz_jax.")}
    games = [name for name in ("go", "dots_and_boxes") if rel.startswith(name + os.sep)]
    if games:
      # A game imports nothing else of the package.
      assert all(m.startswith(f"agz_jax.{games[0]}") for m in ours), (rel, ours)
    # Outside its folder a game is reached through its public names only.
    private = {m for m in ours if len(m.split(".")) > 2 and m.split(".")[1] in ("go", "dots_and_boxes")
               and m.split(".")[1] not in games
               and m.split(".")[2] in ("rules", "scoring", "coords", "features", "state", "benson",
                                       "symmetry", "text", "config")}
    assert not private, (rel, private)
    if rel.startswith("alphago" + os.sep):
      # AlphaGo's knowledge builds on the rules and the search, never on what uses it.
      assert all(m.startswith(("agz_jax.alphago", "agz_jax.go", "agz_jax.search"))
                 for m in ours), (rel, ours)
    if rel.startswith("nets" + os.sep):
      assert all(m.startswith("agz_jax.nets") for m in ours), (rel, ours)
    if rel.startswith(("search" + os.sep, "selfplay.py", "replay.py", "arena.py",
                       os.path.join("training", "agz.py"), os.path.join("training", "loop.py"))):
      # The AlphaZero core knows a game only through agz_jax.game.
      assert not imports & {"agz_jax.go", "agz_jax.dots_and_boxes", "agz_jax.sgf",
                            "agz_jax.match", "agz_jax.gtp"}, rel
      assert not any(m.startswith(("agz_jax.go.", "agz_jax.dots_and_boxes."))
                     for m in imports), rel


# The tools that play (players, GTP, the web page, matches, tournaments) and what they share
# with the trainers (on-device matches, policy games) reach a trained network through its
# checkpoint, never through a trainer's module.
PLAYING = ("players", "gtp", "web", "match", "tournament.py", "arena.py", "policy_games.py",
           "interactive.py", "show.py", "ratings.py")


def test_the_playing_tools_import_no_trainer():
  checked = 0
  for path in _sources():
    rel = os.path.relpath(path, PACKAGE)
    if rel.split(os.sep)[0] in PLAYING:
      trainers = {m for m in _imports(path)
                  if m == "agz_jax.training" or m.startswith("agz_jax.training.")}
      assert not trainers, (rel, trainers)
      checked += 1
  assert checked >= 20  # the folders above were found


def test_the_boundary_check_sees_imports_inside_functions(tmp_path):
  source = tmp_path / "player.py"
  source.write_text("def groups():\n  from agz_jax.training import rollout_policy\n"
                    "  return rollout_policy\n")
  assert "agz_jax.training.rollout_policy" in _imports(str(source))


def _edits_sys_path(path) -> bool:
  """Whether a source file touches sys.path (insert, append, assignment)."""
  tree = ast.parse(open(path, encoding="utf-8").read())
  return any(isinstance(node, ast.Attribute) and node.attr == "path"
             and isinstance(node.value, ast.Name) and node.value.id == "sys"
             for node in ast.walk(tree))


def test_no_module_edits_sys_path(tmp_path):
  edits = [os.path.relpath(p, PACKAGE) for p in _sources() if _edits_sys_path(p)]
  assert not edits, f"{edits}: load config files with agz_jax.config_files instead"
  source = tmp_path / "launcher.py"
  source.write_text("import sys\nsys.path.insert(0, '.')\n")
  assert _edits_sys_path(str(source))


def test_alphagos_planes_are_an_encoding_registered_with_go():
  # go knows no AlphaGo module; the package registers AlphaGo's and KataGo's planes with it.
  assert set(go.ENCODINGS) == {"agz17"} | set(alphago.ENCODINGS)
  assert {"alphago48", "alphago49", "katago", "katago_noladders"} <= set(alphago.ENCODINGS)
  cfg = go.GoConfig(size=5, history=8)
  assert go.planes_shape(cfg, "alphago49") == (5, 5, 49)
  assert go.num_planes(cfg, "agz17") == 17
  with pytest.raises(ValueError, match="encoding 'alphago48' is registered already"):
    go.register_encoding("alphago48", num_planes=48, history=8, encode=None)
  with pytest.raises(ValueError, match=r"encoding must be one of agz17, alphago48, alphago49, "):
    go.check_encoding(cfg, "alphago50")
  with pytest.raises(ValueError, match=r"needs game.history >= 8"):
    go.check_encoding(go.GoConfig(size=5, history=4), "alphago48")
  with pytest.raises(TypeError):
    go.ENCODINGS["mine"] = None  # read-only: register_encoding adds one


def test_go_satisfies_the_game_protocol():
  game.check_protocol(go)
  game.check_protocol(toy_game)
  broken = types.ModuleType("broken")
  broken.init = lambda cfg: None
  with pytest.raises(TypeError, match="has no function step"):
    game.check_protocol(broken)


def test_a_bound_go_game_is_go():
  cfg = go.GoConfig(size=5, komi=0.5, history=2)
  g = game.Game(go, cfg)
  assert hash(g) == hash(game.Game(go, go.GoConfig(size=5, komi=0.5, history=2)))
  assert (g.num_actions, g.pass_action, g.num_symmetries, g.max_length) == (26, 25, 8, 50)
  state = go.play(cfg, [12, 7, 25])
  np.testing.assert_array_equal(g.legal_actions(state), go.legal_actions(cfg, state))
  np.testing.assert_array_equal(g.step(state, 13).board, go.step(cfg, state, 13).board)
  over = go.play(cfg, [25], state)
  assert float(g.result(over)) == float(go.result(cfg, over)) == -1.0  # komi 0.5 decides
  assert float(g.result(over, False)) == 0.0
  planes = go.features(cfg, state)
  policy = jnp.arange(26, dtype=jnp.float32)
  for k in range(8):
    p, q = g.transform(planes, policy, k)
    np.testing.assert_array_equal(p, go.transform_planes(planes, k))
    np.testing.assert_array_equal(q, go.transform_policy(policy, k))
  assert g == game.make({"name": "go", "size": 5, "komi": 0.5, "history": 2, "max_moves": None})
  with pytest.raises(ValueError, match="game.name must be one of go, dots_and_boxes"):
    game.make({"name": "chess", "size": 8})
  with pytest.raises(ValueError, match="game.features is now the network's model.encoding"):
    game.make({"name": "go", "size": 9, "features": "agz17"})
  with pytest.raises(ValueError, match="game 'dots_and_boxes' has no setting komi"):
    game.make({"name": "dots_and_boxes", "rows": 3, "cols": 3, "komi": 7.5})


TOY = game.Game(toy_game, None)


def _prior_evaluator(variables, states, rng_key):
  """A 'network' whose prior is its variables' [2] logits, value 0."""
  del rng_key
  batch = states.to_play.shape[0]
  return jnp.broadcast_to(variables, (batch, 2)), jnp.zeros(batch)


def test_the_discount_follows_the_player_to_move():
  recurrent = search.make_recurrent_fn(TOY, _prior_evaluator)
  states = TOY.init_batch(2)
  out, after = recurrent(jnp.zeros(2), jax.random.PRNGKey(0),
                         jnp.asarray([toy_game.STAY, toy_game.SWITCH]), states)
  np.testing.assert_array_equal(after.to_play, [1, -1])
  np.testing.assert_array_equal(out.discount, [1.0, -1.0])


def test_search_on_a_game_where_a_player_moves_again():
  """Staying is worth a point; with the discount from to_play the search finds it."""
  states = TOY.init_batch(4)
  settings = helpers.search_config(algorithm="puct", num_simulations=64, dirichlet_fraction=0.0,
                                   max_num_considered_actions=2)
  out = search.run_search(TOY, _prior_evaluator, jnp.zeros(2), states, jax.random.PRNGKey(1),
                          settings)
  np.testing.assert_array_equal(search.best_action(settings, out), toy_game.STAY)


def test_the_arena_picks_the_player_from_to_play():
  # a always stays, b always switches. a moves first: it stays to the end. b moves first: it
  # hands over and a stays to the end. a wins every game only if each move is made by the
  # player whose turn it is (by parity, b would move for a after a's first move).
  stay, switch = jnp.asarray([50.0, -50.0]), jnp.asarray([-50.0, 50.0])
  settings = helpers.search_config(algorithm="gumbel", num_simulations=4, gumbel_scale=0.0,
                                   max_num_considered_actions=2)
  out = arena.play_match(TOY, _prior_evaluator, stay, switch, jax.random.PRNGKey(0), num_games=4,
                         search=settings, temperature_moves=0)
  assert (float(out["wins"]), float(out["losses"])) == (4.0, 0.0)
  assert float(out["length"]) == toy_game.MAX_MOVES


def test_old_checkpoint_configs_are_upgraded():
  old = {"game": {"size": 9, "komi": 7.5, "history": 8, "max_moves": None, "features": "agz17"},
         "model": {"blocks": 2, "channels": 32, "value_hidden": 64, "dtype": "float32"},
         "eval": {"num_simulations": 8}}
  new = checkpoint.upgrade_config(old)
  assert new["task"] == "selfplay" and new["model"]["kind"] == "resnet"
  assert new["model"]["encoding"] == "agz17" and "features" not in new["game"]
  assert new["eval"]["dirichlet_fraction"] == 0.0 and new["game"]["name"] == "go"
  sl = checkpoint.upgrade_config({"task": "sl_policy", "game": {"features": "alphago48"},
                                  "model": {"layers": 3}})
  assert (sl["model"]["kind"], sl["model"]["encoding"]) == ("policy", "alphago48")
  assert "features" in old["game"]  # the input is not changed


def test_a_checkpoint_saved_before_the_redesign_plays(tmp_path):
  """Its config on disk has the old layout (planes in game.features, no model.kind, no task)."""
  import json  # pylint: disable=import-outside-toplevel
  from agz_jax import players  # pylint: disable=import-outside-toplevel
  workdir = helpers.make_checkpoint(tmp_path, size=5)
  path = os.path.join(workdir, "checkpoints", "1", "config", "metadata")
  config = json.load(open(path, encoding="utf-8"))
  for section, key in (("model", "kind"), ("model", "encoding"), ("game", "name"),
                       ("eval", "dirichlet_fraction")):
    del config[section][key]
  del config["task"]
  config["game"]["features"] = "agz17"
  with open(path, "w", encoding="utf-8") as f:
    json.dump(config, f)
  player = players.load_player(workdir, simulations=4)
  assert player.encoding == "agz17" and player.has_value
  cfg = go.GoConfig(size=5, **player.planes)
  state = go.play(cfg, [12])
  action = player.analyse(cfg, state)["action"]
  assert go.illegal_reason(cfg, state, action) is None


def test_a_stochastic_evaluator_gets_fresh_keys():
  """Leaf evaluators consume their key (random rollouts will): searches with other keys see
  other draws, at the root and at every simulation, on both per-game search paths."""
  def noisy(variables, states, rng_key):
    del variables
    batch = states.to_play.shape[0]
    return jnp.zeros((batch, 2)), jax.random.uniform(rng_key, (batch,), minval=-1, maxval=1)

  states = TOY.init_batch(2)
  for algorithm in ("gumbel", "puct"):
    settings = helpers.search_config(algorithm=algorithm, num_simulations=6,
                                     max_num_considered_actions=2, dirichlet_fraction=0.0)
    run = jax.jit(lambda keys, s=settings: search.run_search(TOY, noisy, None, states, keys, s))
    first = run(jax.random.split(jax.random.PRNGKey(0), 2)).search_tree.raw_values
    second = run(jax.random.split(jax.random.PRNGKey(1), 2)).search_tree.raw_values
    assert np.all(np.asarray(first[:, 0]) != np.asarray(second[:, 0])), algorithm    # roots
    assert np.all(np.asarray(first[:, 1:]) != np.asarray(second[:, 1:])), algorithm  # leaves
