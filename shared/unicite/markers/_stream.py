"""`MarkerStream`: parse markers while the answer streams, never emitting half a marker.

The stream emits exactly the text `parse_markers` will return, as early as that is certain.
Only removals change the text (``[[USAGE:…]]`` tags, footnote definitions naming a source,
invalid markers under ``on_invalid="drop"``), so the stream holds back text only around them:
an opener (``[``, ``(``, ``<``, ``【``) that may still grow into a marker, a marker that would be
removed until its context (code block, inline code, URL) is certain, a line that may be a
footnote definition, and trailing whitespace. Whether a marker would be removed depends only
on the marker and the sources, so ordinary text flows through with no re-parsing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

from unicite._segment import (
    _BACKTICKS_RE,
    _DELIM_ROW_RE,
    _FENCE_RE,
    _LINK,
    _LIST_RE,
    _SETEXT_RE,
    _TERM_RE,
    MARKER_RE,
    Segment,
    _cached_segments,
    _code_spans,
    _marker_spans,
)
from unicite.exceptions import UsageError
from unicite.markers._parse import (
    DEFINITION_RE,
    Context,
    Definition,
    OnInvalid,
    Region,
    Scan,
    build_answer,
    is_removable,
    plan_removals,
)
from unicite.markers._tokens import ParseStyle, Token, read_token
from unicite.model import CitedAnswer

__all__ = ["MarkerStream"]

_OPENER_RE = re.compile("[\\[(<\u3010]")
_URL_PARTIAL = r"\((?:[^()\s]|\([^()\s]{0,300}\)){0,2048}(?:\([^()\s]{0,300})?"
_LINK_PARTIAL = r"\[[^\[\]\n]{0,200}(?:\](?:" + _URL_PARTIAL + r")?)?"
# Prefixes that may still become a marker once more text arrives (supersets: holding a little
# too long is harmless, releasing too early is not).
_VIABLE_RE = re.compile(
    r"\[(?:\^[^\[\]\s]{0,40}|\[[^\[\]\n]{0,430}\]?|[^\[\]\n]{0,430})"
    r"|\((?:(?:"
    + _LINK
    + r"[ \t]*[,;][ \t]*){0,9}(?:"
    + _LINK_PARTIAL
    + "|"
    + _LINK
    + r"[ \t]*)?)?"
    r"|<(?i:s(?:u(?:p(?:\b[^<>\n]{0,200}(?:>(?:[^<\n]|<(?!/sup>)){0,200}"
    r"(?:<(?:/(?:s(?:u(?:p)?)?)?)?)?)?)?)?)?)?"
    r"|\u3010[^\u3010\u3011\n]{0,170}"
)
_VIABLE_MAX = 26_000
_URL_TAIL_RE = re.compile(_URL_PARTIAL)
_URL_TAIL_MAX = 2_700
_REFDEF_TAIL_RE = re.compile(r":[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]{0,20}(?::/?)?|w(?:w(?:w)?)?)?")
_DEFINITION_PREFIX_RE = re.compile(r"[ ]{0,3}(?:\[(?:\^(?:[^\[\]\s]{1,40}(?:\])?)?)?)?")
_DEFINITION_START_RE = re.compile(r"[ ]{0,3}\[\^[^\[\]\s]{1,40}\]:")
_HEAD = 64
# A blank line; its match ends where the next line starts.
_BLANK_LINE_RE = re.compile(r"(?:(?<=\n)|(?<=\r)(?!\n))[ \t]*(?:\r\n|\r|\n)")
_LOOKBEHIND = 64
_ANCHOR_LINES = 64  # lines looked back for a new anchor
_TRIGGERS = frozenset("`\n\r")
_PLAIN_RE = re.compile("[^\\[(<\u3010`\n\r]*")
_MARKER_ENDS = frozenset("])>\u3011")
_GROUP_WINDOW = 3_000  # longer than any marker (an inline link's URL is at most 2,048)
_GROUP_STEPS = 64


class MarkerStream:
    """Parse citation markers from a streamed answer; emit text that never ends mid-marker.

    Feed the chunks as they arrive and show what `feed` returns; `close` returns the rest.
    Everything returned, joined, is exactly ``answer.text``, so the citations' offsets apply
    to what was shown; the answer is the same as `parse_markers` gives for the whole text.
    Text is held back only while it is uncertain: a partial marker at a chunk boundary
    (``… [1`` / ``2]``), a marker that will be removed (a ``[[USAGE:…]]`` tag, an invalid
    marker under ``on_invalid="drop"``) until its context is known, a line that may be a
    footnote definition, and trailing whitespace. Work per chunk is proportional to the chunk
    in ordinary text.

    Example:
        ```python
        stream = unicite.MarkerStream(sources)
        for chunk in chunks:
            print(stream.feed(chunk), end="")
        print(stream.close())
        answer = stream.answer
        ```
    """

    def __init__(
        self,
        sources: object,
        *,
        style: ParseStyle | Sequence[ParseStyle] = "auto",
        on_invalid: OnInvalid = "drop",
        base: int = 1,
    ) -> None:
        """Prepare a stream; the options are those of `parse_markers`."""
        self._context = Context(sources, style=style, on_invalid=on_invalid, base=base)
        self._chunks: list[str] = []
        self._offsets: list[int] = []
        self._tail = ""  # the text from _tail_start on: what the next chunks still need
        self._tail_start = 0
        self._size = 0
        self._shown = 0  # raw position up to which the text has been emitted
        self._pieces: list[str] = []
        self._walk = 0  # next raw position for the marker walk
        self._blocked = -1  # position of an opener the walk waits on
        self._waiting = False  # the block is an undecided context check
        self._line = 0  # start of the next line to test for a footnote definition
        self._line_dead = False  # that line cannot be one; only its end is looked for
        self._line_seen = 0
        self._line_hold = -1
        self._tokens: list[Token] = []  # removable markers whose removal is not settled
        self._found_until = 0
        self._definitions: list[Definition] = []
        self._regions: list[Region] = []  # settled removals not yet passed
        self._anchor = 0  # a line start where segmenting can restart with the same result
        # An open code fence seen by a check: its char, width, first line, lines checked up to.
        self._fence: tuple[str, int, int, int] | None = None
        self._answer: CitedAnswer | None = None

    # --- public -----------------------------------------------------------------------------

    def feed(self, chunk: str) -> str:
        """Take the next chunk; return the text that is now certain (possibly empty)."""
        if self._answer is not None:
            raise UsageError("the stream is closed")
        if not isinstance(chunk, str):
            raise UsageError(f"chunks must be str, got {type(chunk).__name__}")
        if not chunk:
            return ""
        old = self._size
        self._chunks.append(chunk)
        self._offsets.append(old)
        self._tail += chunk
        self._size += len(chunk)
        if (
            self._blocked < 0
            and self._walk == old
            and not self._tokens
            and not self._definitions
            and ("footnotes" not in self._context.kinds or self._line_dead)
            and _PLAIN_RE.fullmatch(chunk) is not None
        ):
            # Nothing here can start a marker, a line or a code span: only spaces wait.
            self._walk = self._line_seen = self._size
            return self._release(self._size)
        self._advance(not _TRIGGERS.isdisjoint(chunk))
        piece = self._emit()
        self._trim()
        return piece

    def close(self) -> str:
        """End the stream; return the rest of the text. The answer is then in `answer`.

        Raises:
            CitationError: With ``on_invalid="raise"``, when a marker is invalid.
        """
        if self._answer is not None:
            return ""
        text = "".join(self._chunks)
        answer = build_answer(text, self._context)
        shown = "".join(self._pieces)
        if not answer.text.startswith(shown):
            diagnostics = [
                *answer.diagnostics,
                "stream: text emitted while streaming differs from the final text",
            ]
            answer = answer.model_copy(update={"diagnostics": diagnostics})
        self._answer = answer
        rest = answer.text[len(shown) :]
        self._pieces = [shown, rest]
        return rest

    @property
    def answer(self) -> CitedAnswer:
        """The parsed answer, once `close` has been called."""
        if self._answer is None:
            raise UsageError("the answer is ready only after close()")
        return self._answer

    @property
    def text(self) -> str:
        """Everything emitted so far."""
        return "".join(self._pieces)

    # --- text access ------------------------------------------------------------------------

    def _slice(self, start: int, end: int) -> str:
        start = max(0, start)
        end = min(end, self._size)
        if start >= end:
            return ""
        if start >= self._tail_start:
            return self._tail[start - self._tail_start : end - self._tail_start]
        first = bisect.bisect_right(self._offsets, start) - 1
        last = bisect.bisect_left(self._offsets, end)
        if last - first > 64:
            # Many small chunks: merge them so later slices stay cheap.
            merged = "".join(self._chunks[first:last])
            self._chunks[first:last] = [merged]
            self._offsets[first:last] = [self._offsets[first]]
            last = first + 1
        joined = "".join(self._chunks[first:last])
        base = self._offsets[first]
        return joined[start - base : end - base]

    def _trim(self) -> None:
        """Drop the start of the tail buffer that no later step reads."""
        lines = self._line_seen if self._line_dead else self._line
        needed = min(
            self._shown,
            (self._blocked if self._blocked >= 0 else self._walk) - _LOOKBEHIND,
            lines if "footnotes" in self._context.kinds else self._size,
            *(t.start - _LOOKBEHIND for t in self._tokens),
            *(d.start - _LOOKBEHIND for d in self._definitions),
        )
        drop = needed - self._tail_start
        if drop > 0 and drop * 2 > len(self._tail):
            self._tail = self._tail[drop:]
            self._tail_start = needed

    # --- deciding ---------------------------------------------------------------------------

    def _advance(self, trigger: bool) -> None:
        if "footnotes" in self._context.kinds:
            self._scan_lines()
        if self._blocked >= 0 and self._waiting and not trigger:
            return
        self._run_walk()

    def _run_walk(self) -> None:
        start = self._blocked if self._blocked >= 0 else self._walk
        lo = max(0, start - _LOOKBEHIND)
        text = self._slice(lo, self._size)
        self._blocked = -1
        self._waiting = False
        pos = start - lo
        size = len(text)
        context = self._context
        outer = (-1, -1)  # a match whose inside is read too; it is held back with its inside

        def block(at: int, waiting: bool = False) -> None:
            self._blocked = lo + (outer[0] if outer[0] <= at < outer[1] else at)
            self._waiting = waiting

        while True:
            found = _OPENER_RE.search(text, pos)
            if found is None:
                break
            o = found.start()
            match = MARKER_RE.match(text, o)
            if match is None:
                if size - o <= _VIABLE_MAX and _VIABLE_RE.fullmatch(text, o) is not None:
                    block(o)
                    return
                pos = o + 1
                continue
            e = match.end()
            if not _settled(text, o, e):
                block(o)
                return
            # The scan reads each sentence separately; a match holding a sentence end (an
            # assistant label "a. B") may be cut there, and then its inside is read.
            if _TERM_RE.search(text, o, e) is None:
                pos = e
            else:
                pos = o + 1
                if o >= outer[1]:
                    outer = (o, e)
            token = read_token(text, o, e)
            if token is None or not context.accepts(token):
                continue
            ids, _ = context.resolve(token)
            if not is_removable(token, context, ids):
                continue
            verdict = self._check(lo + o, lo + e)
            if verdict == "pending":
                block(o, waiting=True)
                return
            if verdict == "marker" and lo + o >= self._found_until:
                self._tokens.append(_shift(token, lo))
                self._found_until = lo + e
        self._walk = self._size

    def _scan_lines(self) -> None:
        """Find footnote definitions naming a source, line by line, each line read once."""
        self._line_hold = -1
        size = self._size
        while self._line < size:
            if self._line_dead:
                brk = _line_break(self._slice(self._line_seen, size), 0)
                if brk < 0:
                    self._line_seen = size
                    return
                self._line = self._line_seen + brk + 1
                self._line_dead = False
                continue
            line = self._line
            head = self._slice(line, min(size, line + _HEAD))
            cut = _line_break(head, 0)
            head = head if cut < 0 else head[:cut]
            if _DEFINITION_START_RE.match(head) is None:
                if cut < 0 and len(head) < _HEAD and _DEFINITION_PREFIX_RE.fullmatch(head):
                    self._line_hold = line  # may still become a definition
                    return
                self._line_dead = True
                self._line_seen = line
                continue
            text = self._slice(line, size)
            brk = _line_break(text, 0)
            if brk < 0:
                self._line_hold = line
                return
            m = DEFINITION_RE.match(text, 0, brk)
            if m is not None:
                sid, problem = self._context.define(m.group(1), m.group(2))
                if sid is not None and not self._in_code(line + m.start(1)):
                    self._definitions.append(
                        Definition(line, line + m.end(), m.group(1), sid, problem)
                    )
            self._line = line + brk + 1

    def _in_code(self, position: int) -> bool:
        """Whether a position on a complete line lies in a code block (as `segment` says)."""
        if self._inside_fence(position):
            return True
        window = self._slice(self._anchor, self._size)
        segs, starts = _cached_segments(window)
        rel = position - self._anchor
        k = bisect.bisect_right(starts, rel) - 1
        inside = k >= 0 and rel < segs[k].end and segs[k].kind == "code"
        if inside:
            self._remember_fence(window, segs[k].start, segs[k].end)
        else:
            walk = self._blocked if self._blocked >= 0 else self._walk
            self._move_anchor(window, segs, starts, min(rel, walk - self._anchor))
        return inside

    def _check(self, o: int, e: int) -> str:
        """Whether the removable marker at ``o..e`` is a marker of the final text.

        Returns ``"marker"``, ``"text"`` (code, URL, indexing…) or ``"pending"`` when text
        still to come can change it (an unpaired backtick before it, a line that may be a
        code fence).
        """
        if self._inside_fence(o):
            return "text"
        anchor = self._anchor
        window = self._slice(anchor, self._size)
        segs, starts = _cached_segments(window)
        rel, rel_end = o - anchor, e - anchor
        line_start = max(window.rfind("\n", 0, rel), window.rfind("\r", 0, rel)) + 1
        first = line_start
        while first < rel and window[first] in " \t":
            first += 1
        if window.startswith("```", first) and _line_break(window, rel) < 0:
            return "pending"  # the line may still turn out to open a code fence
        k = bisect.bisect_right(starts, rel) - 1
        if k < 0 or rel >= segs[k].end:
            return "text"
        seg = segs[k]
        if seg.kind == "code":
            self._remember_fence(window, seg.start, seg.end)
            return "text"
        blanks = [m.end() for m in _BLANK_LINE_RE.finditer(window, 0, rel)]
        block = blanks[-1] if blanks else 0
        first_seg = bisect.bisect_left(starts, block)
        for j in range(k, first_seg - 1, -1):
            if segs[j].kind == "code":
                first_seg = j + 1
                break
        # Inline code is paired per segment, as the scan does; a backtick run before the marker
        # that is not yet closed may still be, by text to come. A run touching the end of the
        # text so far may still grow, so it pairs with nothing yet.
        end_run = len(window.rstrip("`"))
        # A line may still become a table header (it gains a "|", or its next line turns out to
        # be a delimiter row); that ends the paragraph above it, so code spans running across
        # lines may break. Only the last two lines of the text so far can.
        last_break = _last_break(window, len(window))
        tail = _last_break(window, last_break) + 1 if last_break >= 0 else 0
        header_risk = last_break < len(window) - 1 or "|" in window[max(block, tail) :]
        for j in range(first_seg, k + 1):
            lo, hi = segs[j].start, min(segs[j].end, end_run)
            codes = _code_spans(window, lo, hi)
            closed = [c[0] for c in codes]
            for run in _BACKTICKS_RE.finditer(window, lo, min(hi, rel)):
                i = bisect.bisect_right(closed, run.start()) - 1
                if i < 0 or run.start() >= codes[i][1]:
                    return "pending"
                if header_risk and _has_break(window, codes[i][0], codes[i][1]):
                    return "pending"
        self._move_anchor(window, segs, starts, line_start)
        return "marker" if (rel, rel_end) in _marker_spans(window, seg.start, seg.end) else "text"

    def _move_anchor(
        self,
        window: str,
        segs: tuple[Segment, ...],
        starts: tuple[int, ...],
        limit: int,
    ) -> None:
        """Restart later segmenting at a line where the block parser's state is fresh.

        Such a line starts at column 0 outside code and either follows a blank line (and is
        not a wholly bold line) or is a list item (and not a setext underline or a table
        delimiter row): parsing from there gives what parsing from the start gives. The new
        anchor is at most ``limit`` (relative to the old one): no later check looks before it.
        """
        line = _last_break(window, max(0, min(limit, len(window))) + 1) + 1
        for _ in range(_ANCHOR_LINES):
            if line <= 0:
                return
            if line <= limit and self._fresh_line(window, segs, starts, line):
                self._anchor += line
                return
            line = _last_break(window, line - 1) + 1

    @staticmethod
    def _fresh_line(
        window: str, segs: tuple[Segment, ...], starts: tuple[int, ...], line: int
    ) -> bool:
        end = _line_end(window, line)
        if line >= end or window[line] in " \t`~":
            return False
        k = bisect.bisect_right(starts, line) - 1
        if k >= 0 and line < segs[k].end and segs[k].kind == "code":
            return False
        before = line - (2 if window.startswith("\r\n", line - 2) else 1)
        previous = _last_break(window, before) + 1
        if not window[previous:before].strip():  # after a blank line
            return window[line] not in "*_" or _LIST_RE.match(window, line, end) is not None
        return (
            _LIST_RE.match(window, line, end) is not None
            and _SETEXT_RE.match(window, line, end) is None
            and not ("|" in window[line:end] and _DELIM_ROW_RE.match(window, line, end))
        )

    def _inside_fence(self, position: int) -> bool:
        """Whether ``position`` is still inside the open fence seen by an earlier check."""
        if self._fence is None or position < self._fence[2]:
            return False
        char, width, opened, checked = self._fence
        text = self._slice(checked, position)
        line_end = max(text.rfind("\n"), text.rfind("\r"))
        if line_end < 0:
            return True
        for line in re.split(r"\r\n|\r|\n", text[:line_end]):
            stripped = line.strip()
            if stripped and stripped[0] == char:
                run = len(stripped) - len(stripped.lstrip(char))
                if run >= width and not stripped[run:].strip():
                    self._fence = None
                    return False
        self._fence = (char, width, opened, checked + line_end + 1)
        return True

    def _remember_fence(self, window: str, start: int, end: int) -> None:
        m = _FENCE_RE.match(window, start)
        indent = window[_last_break(window, start) + 1 : start]
        if m is None or window[end:].strip() or len(indent) > 3 or indent.strip(" "):
            return  # closed, or an indented code block that merely starts with backticks
        char = window[start]
        if char == "`" and window.find("`", m.end(), _line_end(window, start)) >= 0:
            return
        line_end = _line_end(window, start)
        if line_end >= len(window):
            return
        width = m.end() - m.start()
        closing = re.search(
            r"(?m)^[ \t]*" + re.escape(char) + "{" + str(width) + r",}[ \t]*$", window[line_end:]
        )
        if closing is not None:
            return
        body = self._anchor + line_end + 1
        self._fence = (char, width, body, body)

    # --- emitting ---------------------------------------------------------------------------

    def _emit(self) -> str:
        hold = self._size
        if self._blocked >= 0:
            hold = min(hold, self._blocked)
        if self._line_hold >= 0:
            hold = min(hold, self._line_hold)
        hold = min(hold, self._settle(hold))
        if hold < self._size:
            hold = self._before_group(hold)
        return self._release(hold)

    def _before_group(self, hold: int) -> int:
        """Step back over markers that end where the held text begins.

        What is held (an opener, a marker to be removed) may still join them into one group
        (``[1]<sup>[9]</sup>[2]`` is one group once the invalid marker goes), and a group's
        citation spans all of it: it is emitted whole.
        """
        for _ in range(_GROUP_STEPS):
            p = hold
            moved = True
            while moved:
                moved = False
                while p > self._shown and self._slice(p - 1, p) in (" ", "\t"):
                    p -= 1
                for region in self._regions:
                    if region.start < p <= region.end:
                        p, moved = region.start, True
            if p <= self._shown or self._slice(p - 1, p) not in _MARKER_ENDS:
                return hold
            lo = max(self._shown, p - _GROUP_WINDOW)
            text = self._slice(lo, p)
            spans = _marker_spans(text, 0, len(text))
            if not spans or spans[-1][1] != len(text):
                return hold
            hold = lo + spans[-1][0]
        return hold

    def _settle(self, hold: int) -> int:
        """Turn pending removals into settled regions; return where unsettled ones begin."""
        if not self._tokens and not self._definitions:
            return hold
        first = min([t.start for t in self._tokens] + [d.start for d in self._definitions])
        lo = first
        # Back over spaces to a character that tells whether the run starts its line.
        while lo > 0 and self._slice(lo - 1, lo) in (" ", "\t"):
            lo -= 1
        lo = max(0, lo - 1)
        text = self._slice(lo, self._size)
        tokens = [_shift(t, -lo) for t in self._tokens]
        definitions = [
            Definition(d.start - lo, d.end - lo, d.label, d.source_id, d.problem)
            for d in self._definitions
        ]
        regions = plan_removals(
            text, Scan(tokens, definitions), [True] * len(tokens), trim_end=False
        )
        unsettled = hold
        kept_tokens: list[Token] = []
        kept_definitions: list[Definition] = []
        for region in regions:
            start, end, last = region.start + lo, region.end + lo, region.last + lo
            inside_t = [t for t in self._tokens if start <= t.start < end]
            inside_d = [d for d in self._definitions if start <= d.start < end]
            if last < hold and last < self._size:
                self._regions.append(Region(start, end, last))
            else:
                unsettled = min(unsettled, start)
                kept_tokens.extend(inside_t)
                kept_definitions.extend(inside_d)
        self._tokens = kept_tokens
        self._definitions = kept_definitions
        self._regions.sort(key=lambda r: r.start)
        return unsettled

    def _release(self, limit: int) -> str:
        """Emit the text up to ``limit`` without removed spans and without trailing whitespace."""
        start = self._shown
        if limit <= start:
            return ""
        raw = self._slice(start, limit)
        if not self._regions:
            piece = raw.rstrip()
            if not piece:
                return ""
            self._shown = start + len(piece)
            self._pieces.append(piece)
            return piece
        parts: list[tuple[int, str]] = []  # (raw position after the part, text)
        position = start
        for region in self._regions:
            if region.end <= position or region.start >= limit:
                continue
            if region.start > position:
                parts.append((region.start, raw[position - start : region.start - start]))
            position = max(position, region.end)
        if position < limit:
            parts.append((limit, raw[position - start : limit - start]))
        out: list[str] = []
        shown_to = start
        pending: list[str] = []
        for after, part in parts:
            stripped = part.rstrip()
            if stripped:
                out.extend(pending)
                pending = []
                out.append(stripped)
                shown_to = after - (len(part) - len(stripped))
                if len(stripped) < len(part):
                    pending.append(part[len(stripped) :])
            elif part:
                pending.append(part)
        if shown_to <= start:
            return ""
        self._shown = shown_to
        self._regions = [r for r in self._regions if r.end > shown_to]
        piece = "".join(out)
        self._pieces.append(piece)
        return piece


def _settled(text: str, o: int, e: int) -> bool:
    """Whether a marker match ending at ``e`` cannot change with more text."""
    if e >= len(text):
        return False
    c = text[e]
    if c == "(" and text.startswith("[[", o):
        return len(text) - e > _URL_TAIL_MAX or _URL_TAIL_RE.fullmatch(text, e) is None
    if c == ":" and text[o] == "[" and text[o + 1 : o + 2].isdigit():
        return _REFDEF_TAIL_RE.fullmatch(text, e) is None
    return True


def _shift(token: Token, delta: int) -> Token:
    return Token(
        token.start + delta,
        token.end + delta,
        token.kind,
        ranges=token.ranges,
        label=token.label,
        urls=token.urls,
        problems=token.problems,
        prefix=token.prefix,
        separator=token.separator,
        ranged=token.ranged,
        ascii=token.ascii,
    )


def _line_break(text: str, pos: int) -> int:
    """Position of the first line break at or after ``pos``, or -1."""
    hits = [i for i in (text.find("\n", pos), text.find("\r", pos)) if i >= 0]
    return min(hits) if hits else -1


def _has_break(text: str, start: int, end: int) -> bool:
    return text.find("\n", start, end) >= 0 or text.find("\r", start, end) >= 0


def _last_break(text: str, end: int) -> int:
    """Position of the last line break before ``end``, or -1."""
    return max(text.rfind("\n", 0, end), text.rfind("\r", 0, end))


def _line_end(text: str, pos: int) -> int:
    brk = _line_break(text, pos)
    return len(text) if brk < 0 else brk
