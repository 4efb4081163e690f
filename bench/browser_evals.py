"""Network evaluations per second in headless Chromium: a network exported to ONNX
(agz_jax.onnx_export) run by ONNX Runtime Web (WebAssembly, one thread, as the page with no
server runs it) on one position at a time, against the same ONNX graph in ONNX Runtime for
Python on the same machine, in the same run.

  python bench/browser_evals.py                                   # pretrained/zero-9x9
  python bench/browser_evals.py --network workdir/dots_3x3 --evaluations 500

Needs npm (to pack onnxruntime-web), chromium, chromedriver and selenium, and the web and dev
extras (onnx, onnxruntime).
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

from agz_jax import onnx_export, players
from agz_jax.web import standalone

import timing

PAGE = """<!DOCTYPE html><html><body><script type="module">
import * as ort from "./ort/ort.wasm.min.mjs";
ort.env.wasm.numThreads = 1;
ort.env.wasm.wasmPaths = new URL("./ort/", import.meta.url).href;
const {shape, evaluations} = await (await fetch("bench.json")).json();
const session = await ort.InferenceSession.create("network.onnx", {executionProviders: ["wasm"]});
const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map((_, i) => (i * 7919) % 3 === 0 ? 1 : 0);
const input = new ort.Tensor("float32", data, shape);
for (let i = 0; i < 20; i++) await session.run({planes: input});   // warm-up
const start = performance.now();
for (let i = 0; i < evaluations; i++) await session.run({planes: input});
window.benchResult = evaluations / ((performance.now() - start) / 1000);
</script></body></html>
"""


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--network", default=None, help="default: pretrained/zero-9x9")
  parser.add_argument("--evaluations", type=int, default=300)
  args = parser.parse_args()
  spec = args.network or players.pretrained_path("zero-9x9")
  network = players.Network.from_checkpoint(spec)
  shape = network.game.planes_shape(network.encoding)
  model = onnx_export.resnet_to_onnx(network.config.model, network.variables, shape,
                                     network.game.num_actions)
  from selenium import webdriver  # pylint: disable=import-outside-toplevel
  from selenium.webdriver.chrome.service import Service  # pylint: disable=import-outside-toplevel
  with tempfile.TemporaryDirectory() as site:
    os.makedirs(os.path.join(site, "ort"))
    standalone.copy_onnxruntime_web(None, os.path.join(site, "ort"))
    with open(os.path.join(site, "network.onnx"), "wb") as f:
      f.write(model.SerializeToString())
    with open(os.path.join(site, "bench.json"), "w", encoding="utf-8") as f:
      json.dump({"shape": [1, *shape], "evaluations": args.evaluations}, f)
    with open(os.path.join(site, "index.html"), "w", encoding="utf-8") as f:
      f.write(PAGE)
    with socket.socket() as s:
      s.bind(("127.0.0.1", 0))
      port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind",
                               "127.0.0.1", "--directory", site],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
      options.add_argument(arg)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    browser = webdriver.Chrome(service=Service(shutil.which("chromedriver"), env=env),
                               options=options)
    try:
      time.sleep(0.5)
      browser.get(f"http://127.0.0.1:{port}/")
      rate = None
      for _ in range(1200):
        rate = browser.execute_script("return window.benchResult")
        if rate:
          break
        time.sleep(0.1)
    finally:
      browser.quit()
      server.terminate()
  import onnxruntime  # pylint: disable=import-outside-toplevel
  options = onnxruntime.SessionOptions()
  options.intra_op_num_threads = 1
  session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                         providers=["CPUExecutionProvider"])
  planes = (np.arange(int(np.prod(shape))) * 7919 % 3 == 0).astype(np.float32).reshape(1, *shape)
  seconds = timing.seconds(lambda: session.run(["logits", "value"], {"planes": planes}),
                           repeats=args.evaluations)
  print(f"{network.name} ({network.encoding}, {'x'.join(map(str, shape))} planes); "
        f"{timing.environment()}")
  print("| runtime (one thread, batch 1) | evaluations/s | against Python's |")
  print("|---|---|---|")
  print(f"| ONNX Runtime Web in headless Chromium | {rate:,.0f} | {rate * seconds:.2f}x |")
  print(f"| ONNX Runtime for Python | {1 / seconds:,.0f} | 1.00x |")


if __name__ == "__main__":
  main()
