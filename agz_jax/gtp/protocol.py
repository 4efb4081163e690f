"""The GTP (version 2) protocol: reading lines, parsing commands, the serve loop, responses.

Commands run on an engine that has one `cmd_<name>(args) -> text` method per
command (GTP names with '-' spelled '_') and raises GtpError for a refusal.
"""

import os
import select
import sys
from typing import NamedTuple

from agz_jax import go

COMMANDS = (
    "protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
    "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score", "time_settings",
    "time_left", "loadsgf", "printsgf", "reg_genmove", "lz-analyze")

COLOURS = {"b": go.BLACK, "black": go.BLACK, "w": go.WHITE, "white": go.WHITE}


class GtpError(Exception):
  """A command failed; its message is the GTP error text."""


class Command(NamedTuple):
  """One command line after GTP preprocessing: its id ('' if none), name and arguments."""

  ident: str
  name: str
  args: list


def parse(line: str) -> Command | None:
  """The command of a line, or None when preprocessing (GTP 2, 3.1) leaves nothing of it.

  Control characters other than HT are removed, text from '#' on is a comment,
  HT counts as a space; a leading number is the command's id (name '' if nothing follows).
  """
  line = "".join(ch for ch in line.split("#", 1)[0] if ch == "\t" or 32 <= ord(ch) != 127)
  parts = line.replace("\t", " ").split()
  if not parts:
    return None
  ident = ""
  if parts[0].isascii() and parts[0].isdigit():
    ident = parts.pop(0)
  if not parts:
    return Command(ident, "", [])
  return Command(ident, parts[0], parts[1:])


def colour(text: str) -> int:
  """go.BLACK or go.WHITE of a GTP colour."""
  value = COLOURS.get(text.lower())
  if value is None:
    raise GtpError(f"syntax error: colour must be b, w, black or white, got {text!r}")
  return value


def require(args: list, count: int, usage: str) -> None:
  """Refuses a command with fewer than `count` arguments."""
  if len(args) < count:
    raise GtpError(f"syntax error: usage: {usage}")


def respond(engine, command: Command) -> tuple[str, bool, str]:
  """Runs a command on the engine: (id, ok, text); a refusal always has a reason."""
  ident, name, args = command
  if not name:
    return ident, False, "syntax error: no command"
  if name not in COMMANDS:
    return ident, False, "unknown command"
  method = getattr(engine, "cmd_" + name.replace("-", "_"))
  try:
    return ident, True, method(args)
  except GtpError as e:
    return ident, False, str(e) or f"{name} failed"
  except Exception as e:  # pylint: disable=broad-exception-caught
    return ident, False, f"internal error: {type(e).__name__}: {e}"


def handle(engine, line: str) -> tuple[str, bool, str] | None:
  """Runs one command line; returns (id, ok, text) or None for an empty line."""
  command = parse(line)
  return None if command is None else respond(engine, command)


def response(ident: str, ok: bool, text: str) -> str:
  """A response as sent: '=ID text' or '?ID text', then a blank line."""
  marker = "=" if ok else "?"
  return f"{marker}{ident} {text}\n\n" if text else f"{marker}{ident}\n\n"


class LineReader:
  """Lines from a file descriptor, and whether another one is waiting (for lz-analyze)."""

  def __init__(self, stream):
    self._stream = stream
    try:
      self._fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
      self._fd = None
    self._buffer = b""
    self._eof = False

  def _fill(self, timeout):
    if self._eof:
      return
    if self._fd is None:
      line = self._stream.readline()
      self._eof = not line
      self._buffer += line.encode() if isinstance(line, str) else line
      return
    ready, _, _ = select.select([self._fd], [], [], timeout)
    if ready:
      chunk = os.read(self._fd, 65536)
      self._eof = not chunk
      self._buffer += chunk

  def readline(self) -> str | None:
    while b"\n" not in self._buffer and not self._eof:
      self._fill(None)
    if not self._buffer:
      return None
    line, sep, rest = self._buffer.partition(b"\n")
    self._buffer = rest
    return (line + sep).decode("utf-8", errors="replace")

  def waiting(self, timeout: float = 0.0) -> bool:
    if b"\n" not in self._buffer and not self._eof:
      self._fill(timeout)
    return b"\n" in self._buffer or self._eof


def serve(engine, stream_in=None, out=None) -> None:
  """The GTP loop: one response per command until quit or end of input.

  An accepted lz-analyze is answered with '=', then the engine's analysis lines
  (engine.lz_analyze, until the next input arrives), then a blank line.
  """
  reader = LineReader(stream_in or sys.stdin)
  out = out or sys.stdout
  while True:
    line = reader.readline()
    if line is None:
      return
    command = parse(line)
    if command is None:
      continue
    ident, ok, text = respond(engine, command)
    if ok and command.name == "lz-analyze":
      out.write(f"={ident}\n")
      out.flush()
      engine.lz_analyze(reader, out, command.args)
      out.write("\n")
      out.flush()
      continue
    out.write(response(ident, ok, text))
    out.flush()
    if ok and command.name == "quit":
      return
