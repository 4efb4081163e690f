"""A slow, deliberately plain pure-Python Go implementation used as the oracle in property tests.

Rules (the same contract as agz_jax.go):

* The board is a flat list of ints: 1 black, -1 white, 0 empty; point index = row * size + col,
  row 0 at the top.  Neighbours are the (up to) four orthogonally adjacent points.
* A stone is placed on an empty point.  First every adjacent opponent group left without a
  liberty is removed (any number of groups).  Then, if the placed stone's own group has no
  liberty, the move is suicide and illegal.
* Positional superko: a move is illegal if the resulting whole-board position (stones only,
  whoever is to play) equals any position seen earlier in the game, the initial position included.
* Pass is always legal.  Two consecutive passes end the game; so does reaching ``max_moves``
  moves (passes count as moves).  On a finished game only pass is legal and it changes nothing.
* Score is Tromp-Taylor area: black stones plus empty points whose region borders only black,
  minus the same for white, minus komi.

Nothing here is clever: groups and liberties come from flood fills, positions are stored as
tuples in a set.  The only concession to speed is that the groups of a position are computed
once and then reused to judge every candidate point.
"""

BLACK = 1
WHITE = -1
EMPTY = 0

OCCUPIED = "occupied"
SUICIDE = "suicide"
SUPERKO = "superko"
GAME_OVER = "game over"


def neighbours_table(size):
    """neighbours_table(size)[p] is the list of points orthogonally adjacent to point p."""
    table = []
    for p in range(size * size):
        row, col = divmod(p, size)
        adjacent = []
        if row > 0:
            adjacent.append(p - size)
        if row < size - 1:
            adjacent.append(p + size)
        if col > 0:
            adjacent.append(p - 1)
        if col < size - 1:
            adjacent.append(p + 1)
        table.append(adjacent)
    return table


def flood_fill(board, neighbours, start):
    """All points connected to ``start`` through points of the same value as ``board[start]``."""
    value = board[start]
    region = {start}
    frontier = [start]
    while frontier:
        p = frontier.pop()
        for q in neighbours[p]:
            if board[q] == value and q not in region:
                region.add(q)
                frontier.append(q)
    return region


class Group:
    """A maximal connected set of same-coloured stones and the set of its liberties."""

    def __init__(self, colour, stones, liberties):
        self.colour = colour
        self.stones = frozenset(stones)
        self.liberties = frozenset(liberties)


def find_groups(board, neighbours):
    """Return (groups, group_of): every group on the board, and a list mapping each point to its
    Group (None for an empty point)."""
    group_of = [None] * len(board)
    groups = []
    for p in range(len(board)):
        if board[p] == EMPTY or group_of[p] is not None:
            continue
        stones = flood_fill(board, neighbours, p)
        liberties = {q for s in stones for q in neighbours[s] if board[q] == EMPTY}
        group = Group(board[p], stones, liberties)
        groups.append(group)
        for s in stones:
            group_of[s] = group
    return groups, group_of


class ReferenceGo:
    """One Go game.  Attributes: board, to_play, terminated, move_count, passes, forfeit, seen
    (set of every whole-board position so far, as tuples), moves (actions played so far)."""

    def __init__(self, size, komi, max_moves, black=(), white=(), to_play=BLACK, simple_ko=False):
        self.size = size
        self.komi = komi
        self.max_moves = max_moves
        self.num_points = size * size
        self.pass_action = size * size
        # simple_ko: a move may not bring back the board before the opponent's last move (instead
        # of any earlier board); illegal such moves are still reported as 'superko'.
        self.simple_ko = simple_ko
        self.neighbours = neighbours_table(size)
        self.board = [EMPTY] * self.num_points
        for p in black:
            self.board[p] = BLACK
        for p in white:
            self.board[p] = WHITE
        self.to_play = to_play
        self.terminated = False
        self.move_count = 0
        self.passes = 0
        self.forfeit = 0
        self.seen = {tuple(self.board)}
        # The stone counts of the boards seen: a move whose board has a count never seen cannot
        # repeat a board, and its board need not be built to be looked up.
        self.seen_counts = {self._stones(self.board)}
        self.moves = []
        self.boards = [tuple(self.board)]  # board after each move played (passes too), initial first
        self._analysis = None  # cache of analyse(), cleared whenever the state changes

    # ------------------------------------------------------------------ move legality

    @staticmethod
    def _stones(board):
        return len(board) - board.count(EMPTY)

    def _after(self, p, captured):
        """The board (a tuple) after the player to move plays at p, capturing `captured`."""
        new_board = list(self.board)
        new_board[p] = self.to_play
        for g in captured:
            for s in g.stones:
                new_board[s] = EMPTY
        return tuple(new_board)

    def analyse(self):
        """For every point p, return (reason, captured): reason is None when placing a stone of
        the player to move at p is legal (captured is then the opponent groups it takes),
        otherwise one of 'occupied', 'suicide', 'superko', 'game over' (captured is None)."""
        if self._analysis is not None:
            return self._analysis
        if self.terminated:
            self._analysis = [(GAME_OVER, None)] * self.num_points
            return self._analysis
        me, opponent = self.to_play, -self.to_play
        _, group_of = find_groups(self.board, self.neighbours)
        stones = self._stones(self.board)
        ko_count = self._stones(self.boards[-2]) if len(self.boards) > 1 else None
        result = []
        for p in range(self.num_points):
            if self.board[p] != EMPTY:
                result.append((OCCUPIED, None))
                continue
            adjacent_groups = []  # distinct groups next to p (a Group equals only itself)
            empty_next = False
            for q in self.neighbours[p]:
                g = group_of[q]  # None: an empty point
                if g is None:
                    empty_next = True
                elif g not in adjacent_groups:
                    adjacent_groups.append(g)
            # Opponent groups whose only liberty is p die when we play at p (p, empty and next
            # to them, is one of their liberties).
            captured = [g for g in adjacent_groups
                        if g.colour == opponent and len(g.liberties) == 1]
            # The new stone's group has a liberty iff: an empty neighbour, or a capture (a captured
            # stone is adjacent to p), or a friendly neighbour group with a liberty other than p.
            has_liberty = (
                empty_next
                or len(captured) > 0
                or any(g.colour == me and len(g.liberties) > 1 for g in adjacent_groups)
            )
            if not has_liberty:
                result.append((SUICIDE, None))
                continue
            # A board can only equal one with as many stones: the others are never built.
            count = stones + 1 - sum(len(g.stones) for g in captured)
            if self.simple_ko:
                repeats = count == ko_count and self._after(p, captured) == self.boards[-2]
            else:
                repeats = count in self.seen_counts and self._after(p, captured) in self.seen
            result.append((SUPERKO, None) if repeats else (None, captured))
        self._analysis = result
        return result

    def illegal_reason(self, action):
        """None if ``action`` is legal now, else the reason string (pass is legal even after the
        game ended)."""
        if action == self.pass_action:
            return None
        return self.analyse()[action][0]

    def legal_mask(self):
        """List of bools of length size*size + 1 (pass last)."""
        return [reason is None for reason, _ in self.analyse()] + [True]

    # ------------------------------------------------------------------ playing

    def play(self, action):
        """Play a legal action (size*size is pass).  On a finished game only pass is legal, and it
        changes nothing."""
        reason = self.illegal_reason(action)
        assert reason is None, f"action {action} is illegal: {reason}"
        if self.terminated:
            return
        if action == self.pass_action:
            self.passes += 1
        else:
            new_board = self._after(action, self.analyse()[action][1])
            self.board = list(new_board)
            self.seen.add(new_board)
            self.seen_counts.add(self._stones(new_board))
            self.passes = 0
        self.moves.append(action)
        self.boards.append(tuple(self.board))
        self.move_count += 1
        self.to_play = -self.to_play
        if self.passes >= 2 or self.move_count >= self.max_moves:
            self.terminated = True
        self._analysis = None

    def play_illegal(self, action):
        """The player to move gives an illegal action: the game ends and that player forfeits;
        the board is left unchanged."""
        assert not self.terminated
        assert self.illegal_reason(action) is not None, f"action {action} is legal"
        self.moves.append(action)
        self.forfeit = self.to_play
        self.terminated = True
        self._analysis = None

    # ------------------------------------------------------------------ scoring

    def ownership(self):
        """Per point: +1 black's area, -1 white's, 0 neither (Tromp-Taylor): a stone is its
        colour's; an empty point is the colour of every stone its empty region borders, if they
        are all of one colour."""
        key = tuple(self.board)
        if getattr(self, "_owner_of", (None,))[0] == key:  # computed once per position
            return list(self._owner_of[1])
        owner = [int(v) for v in self.board]
        done = set()
        for p in range(self.num_points):
            if self.board[p] != EMPTY or p in done:
                continue
            region = flood_fill(self.board, self.neighbours, p)
            done |= region
            borders = {self.board[q] for r in region for q in self.neighbours[r]} - {EMPTY}
            colour = borders.pop() if len(borders) == 1 else 0
            for r in region:
                owner[r] = colour
        self._owner_of = (key, owner)
        return list(owner)

    def area(self, colour):
        """Stones of ``colour`` plus empty points whose empty region borders only ``colour``."""
        return sum(1 for v in self.ownership() if v == colour)

    def score(self):
        """Tromp-Taylor score from black's point of view: black area - white area - komi."""
        owner = self.ownership()
        return float(owner.count(BLACK) - owner.count(WHITE) - self.komi)

    def result(self):
        """+1 black wins, -1 white wins, 0 draw; a forfeit decides the game."""
        if self.forfeit != 0:
            return float(-self.forfeit)
        s = self.score()
        return 1.0 if s > 0 else (-1.0 if s < 0 else 0.0)

    # ------------------------------------------------------------------ display

    def to_ascii(self):
        chars = {BLACK: "X", WHITE: "O", EMPTY: "."}
        rows = []
        for r in range(self.size):
            rows.append(" ".join(chars[v] for v in self.board[r * self.size:(r + 1) * self.size]))
        return "\n".join(rows)
