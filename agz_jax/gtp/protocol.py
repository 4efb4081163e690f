"""The GTP (version 2) protocol: reading lines, parsing commands, the serve loop, responses.

Commands run on an engine that has one `cmd_<name>(args) -> text` method per
command (GTP names with '-' spelled '_') and raises GtpError for a refusal.
"""

import math
import os
import re
import select
import sys
import traceback
from typing import NamedTuple

from agz_jax import go

COMMANDS = (
    "protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
    "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score", "time_settings",
    "time_left", "loadsgf", "printsgf", "reg_genmove", "lz-analyze")

COLOURS = {"b": go.BLACK, "black": go.BLACK, "w": go.WHITE, "white": go.WHITE}

# A longer line is refused whole (its id, if any, is still echoed).
MAX_LINE_BYTES = 65536
# Numbers are ASCII decimals, as in GTP's grammar ("٩" or "²" is not a digit here).
_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


class GtpError(Exception):
  """A command failed; its message is the GTP error text."""


class Command(NamedTuple):
  """One command line after GTP preprocessing: its id ('' if none), name and arguments."""

  ident: str
  name: str
  args: list


def parse(line: str) -> Command | None:
  """The command of a line, or None when preprocessing (GTP 2, 3.1) leaves nothing of it.

  Control characters (0-31 and 127) other than HT are removed, text from '#' on
  is a comment, HT counts as a space, and only the space separates words: other
  Unicode white space (U+00A0, U+3000, ...) is part of a word. A leading number
  is the command's id (name '' if nothing follows).
  """
  line = "".join(ch for ch in line.split("#", 1)[0] if ch == "\t" or 32 <= ord(ch) != 127)
  parts = [word for word in line.replace("\t", " ").split(" ") if word]
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


def _shown(text: str) -> str:
  """An argument as quoted in an error message, cut short."""
  return repr(text if len(text) <= 24 else text[:20] + "...")


def integer(text: str, what: str, low: int, high: int) -> int:
  """An ASCII decimal integer argument from `low` to `high`; `what` names it in errors."""
  if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
    raise GtpError(f"syntax error: {what} must be an integer from {low} to {high}, "
                   f"got {_shown(text)}")
  return int(text)


def number(text: str, what: str, low: float, high: float) -> float:
  """A finite ASCII decimal number argument from `low` to `high`."""
  value = float(text) if len(text) <= 40 and _FLOAT.fullmatch(text) else math.nan
  if not low <= value <= high:
    raise GtpError(f"syntax error: {what} must be a number from {low:g} to {high:g}, "
                   f"got {_shown(text)}")
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
  saved = engine.snapshot()
  try:
    return ident, True, method(args)
  except GtpError as e:
    engine.restore(saved)
    return ident, False, str(e) or f"{name} failed"
  except Exception as e:  # pylint: disable=broad-exception-caught
    engine.restore(saved)
    traceback.print_exc(file=sys.stderr)
    return ident, False, f"internal error: {type(e).__name__}: {str(e)[:200]}"


def handle(engine, line: str) -> tuple[str, bool, str] | None:
  """Runs one command line; returns (id, ok, text) or None for an empty line."""
  command = parse(line)
  return None if command is None else respond(engine, command)


def response(ident: str, ok: bool, text: str) -> str:
  """A response as sent: '=ID text' or '?ID text', then a blank line."""
  marker = "=" if ok else "?"
  return f"{marker}{ident} {text}\n\n" if text else f"{marker}{ident}\n\n"


class LineReader:
  """Lines from a file descriptor, and whether another one is waiting (for lz-analyze).

  A line longer than MAX_LINE_BYTES comes back cut to that length with
  `truncated` set; the rest of it is read and dropped.
  """

  def __init__(self, stream):
    self._stream = stream
    try:
      self._fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
      self._fd = None
    self._buffer = b""
    self._eof = False
    self._dropping = False  # inside the rest of an overlong line
    self.truncated = False

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

  def _drop_rest(self) -> bool:
    """Drops what is buffered of an overlong line's rest; True once its newline is gone."""
    newline = self._buffer.find(b"\n")
    if newline < 0:
      self._buffer = b""
      return self._eof
    self._buffer = self._buffer[newline + 1:]
    return True

  def readline(self) -> str | None:
    self.truncated = False
    while self._dropping:
      if self._drop_rest():
        self._dropping = False
      else:
        self._fill(None)
    while b"\n" not in self._buffer and not self._eof and len(self._buffer) <= MAX_LINE_BYTES:
      self._fill(None)
    if not self._buffer:
      return None
    line, sep, rest = self._buffer.partition(b"\n")
    if len(line) > MAX_LINE_BYTES:
      self._buffer, self._dropping, self.truncated = line[MAX_LINE_BYTES:] + sep + rest, True, True
      return line[:MAX_LINE_BYTES].decode("utf-8", errors="replace")
    self._buffer = rest
    return (line + sep).decode("utf-8", errors="replace")

  def waiting(self, timeout: float = 0.0) -> bool:
    if b"\n" not in self._buffer and not self._eof:
      self._fill(timeout)
    return b"\n" in self._buffer or self._eof


def _too_long(line: str) -> tuple[str, bool, str] | None:
  """The answer to a line cut at MAX_LINE_BYTES: refused, unless it is a comment."""
  command = parse(line)
  if command is None and "#" in line:
    return None
  ident = command.ident if command else ""
  return ident, False, f"syntax error: line longer than {MAX_LINE_BYTES} bytes"


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
    if reader.truncated:
      answer = _too_long(line)
      if answer is not None:
        out.write(response(*answer))
        out.flush()
      continue
    command = parse(line)
    if command is None:
      continue
    ident, ok, text = respond(engine, command)
    if ok and command.name == "lz-analyze":
      out.write(f"={ident}\n")
      out.flush()
      try:
        engine.lz_analyze(reader, out)
      except Exception:  # pylint: disable=broad-exception-caught
        traceback.print_exc(file=sys.stderr)  # the '=' is sent: end the stream, go on
      out.write("\n")
      out.flush()
      continue
    out.write(response(ident, ok, text))
    out.flush()
    if ok and command.name == "quit":
      return
