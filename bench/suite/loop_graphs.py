"""The alphago part's 48 planes in a process of its own, started with XLA_FLAGS that record
XLA's loops in command buffers (XLA reads its flags once, at start-up): prints their
positions/s.

  python bench/suite/loop_graphs.py '{"size": 19, "data": null, "batch": 256, "human": false,
                                      "moves": 180, "repeats": 3}'
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/
import features_speed  # noqa: E402  pylint: disable=wrong-import-position
from agz_jax import go  # noqa: E402  pylint: disable=wrong-import-position


def main(settings: dict) -> float:
  cfg = go.GoConfig(size=settings["size"], komi=7.5, history=8)
  if settings["human"]:
    states = features_speed.human_positions(cfg, settings["data"], settings["batch"], 0)
  else:
    states = features_speed.random_positions(cfg, settings["batch"], settings["moves"], 0)
  return features_speed.positions_per_second(cfg, "alphago48", states, settings["repeats"],
                                             features_speed.ladder_settings("device"))


if __name__ == "__main__":
  print(json.dumps(main(json.loads(sys.argv[1]))))
