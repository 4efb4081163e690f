"""Write a page that plays in the browser alone: no server computes a move.

  python -m agz_jax.web.standalone --checkpoint workdir/dots_3x3 --out site
  python -m agz_jax.web.standalone --pretrained zero-9x9 --out go-site
  python -m http.server --directory site 8000      # or any static host; then open the page

Dots and Boxes networks, and Go networks on AlphaGo Zero's 17 planes or KataGo's without
ladders (the page computes no other Go planes). The folder holds the page (index.html,
standalone.js), the games' rules, planes and the players' PUCT search in JavaScript (boxes_rules.js, go_rules.js, puct.js), the
network as ONNX (network.onnx, agz_jax.onnx_export), settings.json (the game and its board, the
simulations per move and the search settings of the network's training run) and ONNX Runtime
Web (ort/), taken from the npm registry when the folder is written (`npm pack`; or
--onnxruntime-web FILE.tgz, the package as npm packs it), so that the page fetches nothing
from elsewhere when it runs. In Go the page's engine settles the game by the GTP engine's
endgame rules (go_endgame.js: no own eye filled, no pass that hands over points, resignation
where random playouts agree).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

from agz_jax import paths

ORT_WEB = "onnxruntime-web@1.31.1"
# What the page loads of the package: the WebAssembly build alone.
ORT_FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm")
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PAGE_FILES = {"standalone.html": "index.html", "standalone.js": "standalone.js",
              "boxes_rules.js": "boxes_rules.js", "go_rules.js": "go_rules.js",
              "go_endgame.js": "go_endgame.js", "go_katago.js": "go_katago.js",
              "puct.js": "puct.js"}
# The Go encodings the page computes: go_rules.agzPlanes (of 8 boards), go_katago.katagoPlanes.
PAGE_PLANES = ("agz17", "katago_noladders")


class ExportError(ValueError):
  """Input the page cannot be written from, with what to do."""


def _network(spec: str):
  from agz_jax import dots_and_boxes, go, players  # pylint: disable=import-outside-toplevel
  network = players.Network.from_checkpoint(spec)
  if network.game.module not in (dots_and_boxes, go):
    raise ExportError(f"{spec} holds a {network.game.module.__name__.split('.')[-1]} network; the "
                      "page plays Dots and Boxes and Go networks")
  if network.config.model.kind != "resnet" or not network.has_value:
    raise ExportError(f"{spec} holds a {network.config.model.kind} network; the page searches "
                      "with AlphaZero's dual network (a policy and a value)")
  if network.game.module is go and network.encoding not in PAGE_PLANES:
    raise ExportError(f"{spec} reads {network.encoding} planes; the page computes AlphaGo Zero's "
                      "17 planes (agz17) and KataGo's without ladders (katago_noladders) for "
                      "Go, so export a network trained on one of them")
  if network.game.module is go and network.encoding == "agz17" and network.game.cfg.history != 8:
    raise ExportError(f"{spec} reads agz17 planes of {network.game.cfg.history} boards; the page "
                      "computes them of 8 (game.history = 8), so export a network trained so")
  return network


def _game_settings(network) -> dict:
  """What settings.json says of the game."""
  from agz_jax import go  # pylint: disable=import-outside-toplevel
  cfg = network.game.cfg
  if network.game.module is go:
    return {"game": "go", "size": cfg.size, "komi": cfg.komi, "maxMoves": cfg.max_moves}
  return {"game": "dots_and_boxes", "rows": cfg.rows, "cols": cfg.cols}


def copy_onnxruntime_web(tarball: str | None, into: str) -> None:
  """Copies ORT_FILES of the onnxruntime-web package (`tarball`, or npm's) into `into`."""
  with tempfile.TemporaryDirectory() as tmp:
    if tarball is None:
      npm = shutil.which("npm")
      if npm is None:
        raise ExportError("npm is not on the PATH: install Node.js with npm, or give "
                          f"--onnxruntime-web FILE.tgz (`npm pack {ORT_WEB}` on a machine "
                          "that has it)")
      done = subprocess.run([npm, "pack", ORT_WEB, "--silent"], cwd=tmp, capture_output=True,
                            text=True, timeout=600, check=False)
      packed = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
      if done.returncode or not packed:
        last = (done.stderr.strip().splitlines() or ["no package written"])[-1]
        raise ExportError(f"npm pack {ORT_WEB} failed ({last}); give --onnxruntime-web FILE.tgz")
      tarball = os.path.join(tmp, packed[0])
    if not os.path.isfile(tarball):
      raise ExportError(f"--onnxruntime-web {tarball}: no such file")
    try:
      with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
        for name in ORT_FILES:
          member = f"package/dist/{name}"
          if member not in names:
            raise ExportError(f"{tarball} has no {member}: give the onnxruntime-web package "
                              f"({ORT_WEB}) as npm packs it")
          with tar.extractfile(member) as src, open(os.path.join(into, name), "wb") as dst:
            shutil.copyfileobj(src, dst)
    except tarfile.TarError as e:
      first = (str(e).strip().splitlines() or [type(e).__name__])[0]
      raise ExportError(f"{tarball} is not an npm package ({first})") from None


def write_page(spec: str, out: str, *, simulations: int = 64,
               onnxruntime_web: str | None = None) -> str:
  """Writes the page of the network at `spec` (a workdir or checkpoint) into the new folder
  `out`; returns `out`.

  Raises:
    ExportError: a network the page cannot play, `out` not empty, no onnxruntime-web.
    FileNotFoundError: no checkpoint at `spec`.
  """
  from agz_jax import onnx_export, search  # pylint: disable=import-outside-toplevel
  if simulations < 1:
    raise ExportError(f"--simulations must be at least 1, got {simulations}")
  if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
    raise ExportError(f"{out} exists and is not an empty folder: give a new --out")
  network = _network(spec)
  planes_shape = network.game.planes_shape(network.encoding)
  model = onnx_export.resnet_to_onnx(network.config.model, network.variables, planes_shape,
                                     network.game.num_actions)
  settings = search.SearchConfig.from_config(network.config.search, algorithm="puct",
                                             num_simulations=simulations)
  os.makedirs(os.path.join(out, "ort"), exist_ok=True)
  try:
    copy_onnxruntime_web(onnxruntime_web, os.path.join(out, "ort"))
    with open(os.path.join(out, "network.onnx"), "wb") as f:
      f.write(model.SerializeToString())
    page = {**_game_settings(network), "simulations": simulations,
            "network": network.name, "encoding": network.encoding,
            "search": {"pbCInit": settings.pb_c_init, "pbCBase": settings.pb_c_base,
                       "qTransform": settings.q_transform, "firstPlay": settings.first_play,
                       "fpuReduction": settings.fpu_reduction,
                       "priorTemperature": settings.prior_temperature,
                       "valueScale": list(settings.value_scale),
                       "valueScaleMoves": settings.value_scale_moves}}
    with open(os.path.join(out, "settings.json"), "w", encoding="utf-8") as f:
      json.dump(page, f, indent=1)
    for name, target in PAGE_FILES.items():
      shutil.copyfile(os.path.join(STATIC, name), os.path.join(out, target))
  except BaseException:
    shutil.rmtree(out, ignore_errors=True)  # nothing half-written is left behind
    raise
  return out


def main(argv=None) -> int:
  parser = argparse.ArgumentParser(prog="python -m agz_jax.web.standalone",
                                   description=__doc__.splitlines()[0])
  who = parser.add_mutually_exclusive_group(required=True)
  who.add_argument("--checkpoint", help="a training workdir or checkpoint (Dots and Boxes, or "
                   "Go on 17 planes or katago_noladders)")
  who.add_argument("--pretrained", help="a network shipped in the repository's pretrained/")
  parser.add_argument("--out", required=True, help="the new folder")
  parser.add_argument("--simulations", type=int, default=64, help="the engine's search per move")
  parser.add_argument("--onnxruntime-web", default=None,
                      help=f"the {ORT_WEB} package as npm packs it (default: npm pack)")
  args = parser.parse_args(argv)
  try:
    from agz_jax.players import pretrained_path  # pylint: disable=import-outside-toplevel
    spec = args.checkpoint or pretrained_path(args.pretrained)
    out = write_page(spec, args.out, simulations=args.simulations,
                     onnxruntime_web=args.onnxruntime_web)
  except (ExportError, FileNotFoundError, ImportError, paths.UnsupportedPath) as e:
    print(f"standalone: {e}", file=sys.stderr)
    return 2
  print(f"the page of {spec} written to {out}: serve the folder (python -m http.server "
        f"--directory {out}) and open it")
  return 0


if __name__ == "__main__":
  sys.exit(main())
