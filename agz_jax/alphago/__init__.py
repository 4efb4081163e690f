"""AlphaGo (Silver et al. 2016): its hand-made Go knowledge and its leaf evaluation.

`agz_jax.go` holds what every Go network needs (the rules, AlphaGo Zero's 17 planes, the
symmetries); this package holds what only the 2016 pipeline uses:

* `ladders`: the ladder reader, on the device.
* `planes`: the 48 planes of the policy networks and the 49 of the value network
  ("alphago48", "alphago49"), and how their ladders are read (`LadderSettings`,
  `ladder_settings`).
* `katago`: KataGo's inputs ("katago", "katago_noladders").
* `patterns`, `pattern_codes`: the features of the fast rollout and tree policies.
* `rollout`: games played out by a fast policy, on the device.
* `lanes`: the lane scheduler that the ladder reader and the rollouts share.
* `leaf`: the search's leaf evaluation (`evaluator`, `LeafSettings`): the SL prior, and
  rollouts and the value network (or a dual network's value head, `DualValue`) mixed by
  lambda.

`ENCODINGS` names the input encodings of `planes` and `katago` with what `go.features` needs
to compute them; importing this package registers none: `agz_jax` registers them, once,
beside go's own "agz17".
"""

from agz_jax.alphago import katago, lanes, ladders, pattern_codes, patterns, planes, rollout
from agz_jax.alphago.leaf import PRIORS, DualPolicy, DualValue, LeafSettings, evaluator, rollout_logits
from agz_jax.alphago.planes import LADDER_DEFAULTS, LadderSettings, ladder_settings

# Every encoding of this package: name -> go.register_encoding's keyword arguments.
ENCODINGS = {**planes.ENCODINGS, **katago.ENCODINGS}

__all__ = [
    "DualPolicy", "ENCODINGS", "DualValue", "LADDER_DEFAULTS", "LadderSettings", "LeafSettings", "PRIORS", "evaluator", "ladder_settings",
    "ladders", "lanes", "pattern_codes", "patterns", "planes", "rollout", "rollout_logits",
]
