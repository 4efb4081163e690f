"""A dual network (nets.resnet.AlphaZeroNet, played in inference mode) as an ONNX graph, so that
a page can evaluate positions in the browser (ONNX Runtime Web) with no Python behind it.

The graph takes the network's input planes as the players compute them, [N, H, W, F] float32
(`planes`), and gives the policy's logits [N, A] (`logits`) and the value for the player to
move [N] (`value`), the network's own two outputs: the auxiliary heads (ownership, score, the
opponent's reply) train the trunk and are left out. Batch normalisation is folded into a scale
and a shift per channel (its running statistics, as play uses them); parameters stored in
bfloat16 become float32.

The graph is written with the `onnx` package's helpers, layer by layer as AlphaZeroNet lays
them out (its parameters' names), at opset 17, which ONNX Runtime Web runs.
"""

import numpy as np

OPSET = 17
# The file format's version: opset 17's (a newer onnx package writes its own newest, which
# the ONNX Runtime Web a page bundles may not read yet).
IR_VERSION = 8
BATCH_NORM_EPSILON = 1e-5  # flax.linen.BatchNorm's default, which AlphaZeroNet keeps


def _onnx():
  try:
    import onnx  # pylint: disable=import-outside-toplevel
  except ImportError:
    raise ImportError("exporting to ONNX needs the onnx package: pip install -e '.[web]'") from None
  return onnx


class _Graph:
  """Nodes and initializers of a graph under construction, with fresh names."""

  def __init__(self, onnx):
    self.onnx, self.nodes, self.initializers, self._count = onnx, [], [], 0

  def name(self, hint: str) -> str:
    self._count += 1
    return f"{hint}_{self._count}"

  def constant(self, hint: str, array) -> str:
    name = self.name(hint)
    array = np.asarray(array)
    array = array.astype(np.int64 if array.dtype.kind in "iu" else np.float32)
    self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
    return name

  def op(self, kind: str, inputs: list[str], hint: str | None = None, **attributes) -> str:
    out = self.name(hint or kind.lower())
    self.nodes.append(self.onnx.helper.make_node(kind, inputs, [out], **attributes))
    return out

  # -- layers, on NCHW tensors ---------------------------------------------------------------
  def conv(self, x: str, kernel) -> str:
    """A flax nn.Conv without bias ('SAME' padding), kernel [kh, kw, Cin, Cout]."""
    kernel = np.asarray(kernel, np.float32)
    pad = (kernel.shape[0] - 1) // 2
    weight = self.constant("conv_weight", np.transpose(kernel, (3, 2, 0, 1)))
    return self.op("Conv", [x, weight], "conv", pads=[pad, pad, pad, pad])

  def batch_norm(self, x: str, params, stats) -> str:
    scale = np.asarray(params["scale"], np.float32) / np.sqrt(
        np.asarray(stats["var"], np.float32) + BATCH_NORM_EPSILON)
    shift = np.asarray(params["bias"], np.float32) - np.asarray(stats["mean"], np.float32) * scale
    x = self.op("Mul", [x, self.constant("bn_scale", scale.reshape(1, -1, 1, 1))])
    return self.op("Add", [x, self.constant("bn_shift", shift.reshape(1, -1, 1, 1))])

  def dense(self, x: str, params) -> str:
    """A flax nn.Dense on [N, K]: x @ kernel (+ bias)."""
    y = self.op("MatMul", [x, self.constant("dense_kernel", np.asarray(params["kernel"]))])
    if "bias" in params:
      y = self.op("Add", [y, self.constant("dense_bias", np.asarray(params["bias"]))])
    return y

  def channel_bias(self, x: str, bias: str) -> str:
    """x [N, C, H, W] + bias [N, C] on every point."""
    return self.op("Add", [x, self.op("Unsqueeze", [bias, self.constant("axes", [2, 3])])])

  def global_pool(self, x: str) -> str:
    """[N, C, H, W] -> [N, 2C]: each channel's mean, then its maximum (resnet.global_pool)."""
    mean = self.op("ReduceMean", [x], "pool_mean", axes=[2, 3], keepdims=0)
    peak = self.op("ReduceMax", [x], "pool_max", axes=[2, 3], keepdims=0)
    return self.op("Concat", [mean, peak], "pooled", axis=1)

  def flatten_nhwc(self, x: str) -> str:
    """[N, C, H, W] -> [N, H * W * C], in the order of the flax model's reshape of NHWC."""
    x = self.op("Transpose", [x], "to_nhwc", perm=[0, 2, 3, 1])
    return self.op("Flatten", [x], "flat", axis=1)


def resnet_to_onnx(model_config, variables, planes_shape: tuple[int, int, int],
                   num_actions: int):
  """The ONNX model (an onnx.ModelProto) of AlphaZeroNet's policy and value.

  Args:
    model_config: the network's config (kind 'resnet'; blocks, channels, global_pooling,
      the encoding, whose global features the network reads apart: nets.GLOBAL_INPUTS).
    variables: {'params', 'batch_stats'} of the network.
    planes_shape: (H, W, F) of one position's planes.
    num_actions: A, the policy's actions.

  Raises:
    ValueError: a network that is not a dual residual network.
  """
  from agz_jax import nets  # pylint: disable=import-outside-toplevel
  from agz_jax.nets.resnet import pooled_blocks  # pylint: disable=import-outside-toplevel
  onnx = _onnx()
  if model_config.get("kind", "resnet") != "resnet":
    raise ValueError(f"only AlphaZero's dual residual network exports to ONNX, not a "
                     f"{model_config.get('kind')!r} network")
  params, stats = variables["params"], variables.get("batch_stats", {})
  blocks = int(model_config["blocks"])
  global_inputs = nets.GLOBAL_INPUTS.get(model_config.get("encoding", ""), 0)
  pooling = (set(pooled_blocks(blocks)) if model_config.get("global_pooling")
             else set())
  h, w, f = planes_shape
  g = _Graph(onnx)

  planes = "planes"
  spatial = planes
  if global_inputs:
    spatial = g.op("Slice", [planes, g.constant("start", [0]), g.constant("end", [f - global_inputs]),
                             g.constant("axis", [3])], "spatial")
    features = g.op("Slice", [planes, g.constant("start", [0, 0, f - global_inputs]),
                              g.constant("end", [1, 1, f]), g.constant("axes", [1, 2, 3])],
                    "global_planes")
    features = g.op("Flatten", [features], "global_features", axis=1)
  x = g.op("Transpose", [spatial], "to_nchw", perm=[0, 3, 1, 2])
  x = g.conv(x, params["Conv_0"]["kernel"])
  if global_inputs:
    x = g.channel_bias(x, g.dense(features, params["global_inputs"]))
  x = g.op("Relu", [g.batch_norm(x, params["BatchNorm_0"], stats["BatchNorm_0"])])
  for i in range(blocks):
    p, s = params[f"ResidualBlock_{i}"], stats[f"ResidualBlock_{i}"]
    y = g.conv(x, p["Conv_0"]["kernel"])
    y = g.op("Relu", [g.batch_norm(y, p["BatchNorm_0"], s["BatchNorm_0"])])
    if i in pooling:
      y = g.channel_bias(y, g.dense(g.global_pool(y), p["pooled_bias"]))
    y = g.batch_norm(g.conv(y, p["Conv_1"]["kernel"]), p["BatchNorm_1"], s["BatchNorm_1"])
    x = g.op("Relu", [g.op("Add", [x, y])])
  pooled = g.global_pool(x) if pooling else None

  p = g.conv(x, params["Conv_1"]["kernel"])
  p = g.op("Relu", [g.batch_norm(p, params["BatchNorm_1"], stats["BatchNorm_1"])])
  if pooled is not None:
    p = g.channel_bias(p, g.dense(pooled, params["policy_pooled_bias"]))
  logits = g.dense(g.flatten_nhwc(p), params["Dense_0"])
  g.nodes.append(onnx.helper.make_node("Identity", [logits], ["logits"]))

  v = g.conv(x, params["Conv_2"]["kernel"])
  v = g.flatten_nhwc(g.op("Relu", [g.batch_norm(v, params["BatchNorm_2"], stats["BatchNorm_2"])]))
  if pooled is not None:
    v = g.op("Concat", [v, pooled], axis=1)
  v = g.op("Relu", [g.dense(v, params["Dense_1"])])
  v = g.op("Tanh", [g.dense(v, params["Dense_2"])])
  g.nodes.append(onnx.helper.make_node("Reshape", [v, g.constant("shape", [-1])], ["value"]))

  floats = onnx.TensorProto.FLOAT
  graph = onnx.helper.make_graph(
      g.nodes, "agz_jax_resnet",
      [onnx.helper.make_tensor_value_info("planes", floats, ["batch", h, w, f])],
      [onnx.helper.make_tensor_value_info("logits", floats, ["batch", num_actions]),
       onnx.helper.make_tensor_value_info("value", floats, ["batch"])],
      g.initializers)
  model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", OPSET)],
                                 producer_name="agz_jax", ir_version=IR_VERSION)
  onnx.checker.check_model(model)
  return model
