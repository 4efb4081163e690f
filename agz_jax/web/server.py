"""The web page's HTTP server: the page itself and a small JSON API around one game.

  GET  /               the page (static/index.html)
  GET  /api/game       the game as the page draws it (sessions' `view`)
  POST /api/new        {"human": "black"|"white" (Go) or "first"|"second", "seconds": 1.0}
  POST /api/move       {"move": "D4" | "pass" | "resign" (Go) or "h(0,1)" / a line's index}
  POST /api/undo       back to the person's previous turn
  GET  /api/sgf        the game as SGF (Go)

Every answer to /api is JSON; a request that cannot be taken gets status 400
(404, 405, 413 for a wrong path, method or size) and {"error": "one line"},
and the game in progress is unchanged. Requests are served one at a time.
"""

import http.server
import json
import os
import threading
import traceback

from agz_jax.web.sessions import Refused

STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
MAX_BODY = 4096


class _Error(Exception):
  def __init__(self, status: int, message: str):
    super().__init__(message)
    self.status = status


class Handler(http.server.BaseHTTPRequestHandler):
  """Serves the page and the API of `session` (a GoSession or DotsSession), one request at a
  time (`lock`): make_handler sets both on a subclass."""

  server_version = "agz_jax"
  session = None
  lock = None

  def log_message(self, format, *args):  # pylint: disable=redefined-builtin
    del format, args  # quiet: the page polls nothing, but tests make many requests

  def do_GET(self):  # pylint: disable=invalid-name
    self._serve("GET")

  def do_POST(self):  # pylint: disable=invalid-name
    self._serve("POST")

  def _serve(self, method: str) -> None:
    try:
      path = self.path.split("?", 1)[0]
      if path in ("/", "/index.html"):
        if method != "GET":
          raise _Error(405, f"{method} {path}: the page is read with GET")
        with open(os.path.join(STATIC, "index.html"), "rb") as f:
          return self._send(200, f.read(), "text/html; charset=utf-8")
      routes = {("GET", "/api/game"): self._game, ("POST", "/api/new"): self._new,
                ("POST", "/api/move"): self._move, ("POST", "/api/undo"): self._undo,
                ("GET", "/api/sgf"): self._sgf}
      if (method, path) not in routes:
        known = sorted({p for _, p in routes})
        if path in known:
          raise _Error(405, f"{method} {path} is not served: use "
                            f"{' or '.join(m for m, p in routes if p == path)}")
        raise _Error(404, f"no such page {path!r} (the API: {', '.join(known)})")
      body = self._body() if method == "POST" else {}
      with self.lock:
        routes[(method, path)](body)
    except _Error as e:
      self._json(e.status, {"error": str(e)})
    except Refused as e:
      self._json(400, {"error": str(e)})
    except Exception as e:  # pylint: disable=broad-except
      # A bug, not the request: the page says so in one line, the details go to the log.
      traceback.print_exc()
      self._json(500, {"error": f"the engine failed ({type(e).__name__}: {e}); the game "
                                "is unchanged, see the server's log"})

  def _body(self) -> dict:
    try:
      length = int(self.headers.get("Content-Length") or 0)
    except ValueError:
      raise _Error(400, "Content-Length is not a number") from None
    if length < 0:
      raise _Error(400, f"Content-Length is {length}; give the body's size in bytes")
    if length > MAX_BODY:
      raise _Error(413, f"the body has {length} bytes; requests are at most {MAX_BODY}")
    raw = self.rfile.read(length) if length else b"{}"
    try:
      body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
      raise _Error(400, 'the body must be a JSON object such as {"move": "D4"}') from None
    if not isinstance(body, dict):
      raise _Error(400, 'the body must be a JSON object such as {"move": "D4"}')
    return body

  def _game(self, body):
    del body
    self._json(200, self.session.view())

  def _new(self, body):
    unknown = sorted(set(body) - {"human", "seconds"})
    if unknown:
      raise _Error(400, f"/api/new takes human and seconds, not {', '.join(unknown)}")
    view = self.session.view()
    self.session.new(body.get("human", view["human"]), body.get("seconds", view["seconds"]))
    self._json(200, self.session.view())

  def _move(self, body):
    if "move" not in body or not isinstance(body["move"], (str, int)) \
        or isinstance(body["move"], bool):
      raise _Error(400, 'give the move as {"move": "D4"} (Go) or {"move": "h(0,1)"}')
    self.session.play(body["move"])
    self._json(200, self.session.view())

  def _undo(self, body):
    del body
    self.session.undo()
    self._json(200, self.session.view())

  def _sgf(self, body):
    del body
    if not hasattr(self.session, "sgf"):
      raise _Error(404, f"{self.session.game_name} has no SGF record")
    self._send(200, self.session.sgf().encode(), "application/x-go-sgf",
               {"Content-Disposition": 'attachment; filename="agz_jax.sgf"'})

  def _json(self, status: int, data: dict) -> None:
    self._send(status, json.dumps(data).encode(), "application/json")

  def _send(self, status: int, data: bytes, kind: str, headers: dict | None = None) -> None:
    self.send_response(status)
    self.send_header("Content-Type", kind)
    self.send_header("Content-Length", str(len(data)))
    self.send_header("Cache-Control", "no-store")
    for k, v in (headers or {}).items():
      self.send_header(k, v)
    self.end_headers()
    self.wfile.write(data)


def make_handler(session):
  """The request handler class serving `session` (a GoSession or DotsSession)."""
  return type("Handler", (Handler,), {"session": session, "lock": threading.Lock()})


def make_server(session, host: str = "127.0.0.1", port: int = 8000):
  """A ThreadingHTTPServer for `session` (port 0: any free port; see server_address)."""
  return http.server.ThreadingHTTPServer((host, port), make_handler(session))
