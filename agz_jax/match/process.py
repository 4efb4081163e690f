"""A GTP engine as a child process: commands with timeouts, failures as exceptions."""

import os
import select
import shlex
import subprocess
import threading
import time


# An engine that writes more than this without finishing an answer has failed.
MAX_ANSWER_BYTES = 1 << 20


class GtpRefused(Exception):
  """The engine answered a command with '? message'."""


class EngineFailure(Exception):
  """The engine crashed, closed its output or did not answer in time."""

  def __init__(self, message: str, timed_out: bool = False):
    super().__init__(message)
    self.timed_out = timed_out


class EngineStartError(Exception):
  """An engine process could not be started or never answered its first command."""


class GtpProcess:
  """One engine process, spoken to over GTP through its stdin and stdout.

  The first time each command name is sent (boardsize, genmove, ...) it may
  take `startup_timeout`: a JAX engine compiles then. After that each command
  has `timeout` seconds. After a failure the process is dead and is replaced.

  Args:
    argv: the command line.
    name: the player's name, for messages.
    log_path: the process's stderr is appended to this file.
    timeout, startup_timeout: seconds.
    seed: the value of '{seed}' in argv, kept for the results.
  """

  def __init__(self, argv: list[str], name: str, log_path: str, *, timeout: float,
               startup_timeout: float, seed: int | None = None):
    self.argv, self.name, self.log_path, self.seed = argv, name, log_path, seed
    self.timeout, self.startup_timeout = timeout, startup_timeout
    self._warm = set()
    self._buffer = b""
    self._next_id = 1
    self._closing = threading.Lock()
    self.alive = False
    env = dict(os.environ)
    # Several JAX engines may share one accelerator: none may take 75% of its memory up front.
    env.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    self._log = open(log_path, "ab")  # pylint: disable=consider-using-with
    try:
      # A session of its own: Ctrl-C reaches only the match, which then shuts the engines
      # down itself, after it has stopped recording games.
      self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=self._log, env=env, start_new_session=True)
    except OSError as e:
      self._log.close()
      raise EngineStartError(f"cannot start {name} ({shlex.join(argv)}): {e}") from None
    self.alive = True
    try:
      self.send("protocol_version")
    except (EngineFailure, GtpRefused) as e:
      self.close()
      raise EngineStartError(f"{name} ({shlex.join(argv)}) did not start: {e}\n"
                             f"last lines of {log_path}:\n{self.log_tail()}") from None

  def log_tail(self, lines: int = 10) -> str:
    try:
      with open(self.log_path, "rb") as f:
        text = f.read()[-4000:].decode("utf-8", errors="replace")
    except OSError:
      return ""
    return "\n".join(text.splitlines()[-lines:])

  def send(self, command: str) -> str:
    """Sends one command, with an id; returns the text of its '=' answer.

    Answers with another id (left over from an earlier command) are dropped;
    an answer without an id is taken as this command's.

    Raises:
      GtpRefused: for a '?' answer (the process stays usable).
      EngineFailure: crash, closed output or timeout (the process is then dead).
    """
    if not self.alive:
      raise EngineFailure(f"{self.name} is not running")
    kind = command.split()[0]
    timeout = self.timeout if kind in self._warm else max(self.timeout, self.startup_timeout)
    ident, self._next_id = str(self._next_id), self._next_id + 1
    try:
      self._process.stdin.write(f"{ident} {command}".encode() + b"\n")
      self._process.stdin.flush()
    except (BrokenPipeError, OSError):
      self._die()
      raise EngineFailure(
          f"{self.name} crashed before {command!r} ({self._exit_status()})") from None
    deadline = time.monotonic() + timeout
    while True:
      answer = self._take_answer()
      if answer is not None:
        number = answer[1:len(answer) - len(answer[1:].lstrip("0123456789"))]
        if number in ("", ident):
          break
        continue  # an answer to an earlier command
      if len(self._buffer) > MAX_ANSWER_BYTES:
        self._die()
        raise EngineFailure(f"{self.name} wrote more than {MAX_ANSWER_BYTES} bytes without "
                            f"finishing its answer to {command!r}")
      left = deadline - time.monotonic()
      if left <= 0:
        self._die()
        raise EngineFailure(f"{self.name} timed out after {timeout:g} s on {command!r}",
                            timed_out=True)
      ready, _, _ = select.select([self._process.stdout], [], [], left)
      if ready:
        chunk = os.read(self._process.stdout.fileno(), 65536)
        if not chunk:
          self._die()
          raise EngineFailure(f"{self.name} crashed on {command!r} ({self._exit_status()})")
        self._buffer += chunk.replace(b"\r", b"")
    self._warm.add(kind)
    ok, text = answer[0] == "=", answer[1:].lstrip("0123456789").strip()
    if not ok:
      raise GtpRefused(text or "refused")
    return text

  def _take_answer(self) -> str | None:
    """The next complete answer in the buffer ('=...' or '?...' up to a blank line)."""
    while self._buffer and self._buffer[:1] not in (b"=", b"?"):
      newline = self._buffer.find(b"\n")
      if newline < 0:
        return None
      self._buffer = self._buffer[newline + 1:]  # Noise outside GTP answers.
    end = self._buffer.find(b"\n\n")
    if end < 0:
      return None
    answer, self._buffer = self._buffer[:end], self._buffer[end + 2:]
    return answer.decode("utf-8", errors="replace")

  def _exit_status(self) -> str:
    try:
      code = self._process.wait(timeout=2)
    except subprocess.TimeoutExpired:
      return "still running, output closed"
    return f"exit code {code}"

  def _die(self):
    self.close(grace=0)  # it has exited or stopped answering: no point asking it to quit

  def close(self, grace: float = 3.0):
    """Asks the engine to quit, kills it after `grace` seconds; leaves no process behind."""
    self.alive = False
    with self._closing:
      process = self._process
      if process.poll() is None and grace > 0:
        try:
          process.stdin.write(b"quit\n")
          process.stdin.flush()
          process.wait(timeout=grace)
        except (OSError, ValueError, subprocess.TimeoutExpired):
          pass
      if process.poll() is None:
        process.kill()
        process.wait()
      for stream in (process.stdin, process.stdout):
        try:
          stream.close()
        except OSError:
          pass
      self._log.close()
