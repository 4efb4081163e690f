"""Every relative link of the repository's markdown leads somewhere: the file exists and,
where the link names a section (#anchor), the target has a heading of that anchor under
GitHub's rules (lower case, punctuation dropped, spaces to hyphens, repeats numbered)."""

import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP = {".git", ".venv", "node_modules", "workdir", "data", "matches", "figures"}
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _markdown_files():
  for root, dirs, files in os.walk(REPO):
    dirs[:] = [d for d in dirs if d not in _SKIP and not d.startswith(".")]
    for name in files:
      if name.endswith(".md"):
        yield os.path.join(root, name)


def slug(heading: str) -> str:
  """GitHub's anchor of a heading's text (before repeats are numbered)."""
  text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its words
  text = text.strip().lower()
  text = "".join(c for c in text if c.isalnum() or c in " -_")
  return text.replace(" ", "-")


def anchors(path: str) -> set[str]:
  seen, out, fenced = {}, set(), False
  with open(path, encoding="utf-8") as f:
    for line in f:
      if _FENCE.match(line):
        fenced = not fenced
        continue
      match = None if fenced else _HEADING.match(line)
      if match:
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
  return out


def links(path: str):
  """(line number, target) of each link outside code (fenced blocks and code spans, which may
  run over a line's end)."""
  kept, fenced = [], False
  with open(path, encoding="utf-8") as f:
    for line in f:
      if _FENCE.match(line):
        fenced = not fenced
        kept.append("\n")
      else:
        kept.append("\n" if fenced else line)
  text = re.sub(r"`[^`]*`", lambda m: "\n" * m.group(0).count("\n"), "".join(kept))
  for match in _LINK.finditer(text):
    yield text.count("\n", 0, match.start()) + 1, match.group(1) or match.group(2)


def test_slug_follows_githubs_rules():
  assert slug("First-play urgency and c_puct at 2 s a move (19x19, SPRT)") == (
      "first-play-urgency-and-c_puct-at-2-s-a-move-19x19-sprt")
  assert slug("Self-play against pgx + mctx (`bench/selfplay_speed.py`)") == (
      "self-play-against-pgx--mctx-benchselfplay_speedpy")
  assert slug("KataGo's inputs beside them") == "katagos-inputs-beside-them"


def test_repeated_headings_are_numbered(tmp_path):
  page = tmp_path / "page.md"
  page.write_text("# A\n## A\n```\n# not a heading\n```\n## B (c)\n")
  assert anchors(str(page)) == {"a", "a-1", "b-c"}


@pytest.mark.parametrize("path", sorted(_markdown_files()), ids=lambda p: os.path.relpath(p, REPO))
def test_relative_links_resolve(path):
  broken = []
  for number, target in links(path):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
      continue
    file, _, anchor = target.partition("#")
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
    if not os.path.exists(resolved):
      broken.append(f"line {number}: {target} (no such file)")
    elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
      broken.append(f"line {number}: {target} (no such section)")
  assert not broken, "\n".join(broken)
