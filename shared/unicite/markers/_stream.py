"""`MarkerStream`: parse markers while the answer streams; what is shown never changes.

The stream works in two stages. The first emits exactly the text `parse_markers` will return
(the parsed text), as early as that is certain. Only removals change that text
(``[[USAGE:…]]`` tags, footnote definitions naming a source, invalid markers under
``on_invalid="drop"``), so it holds back text only around them: an opener (``[``, ``(``, ``<``,
``【``) that may still grow into a marker, a marker that would be removed until its context
(code block, inline code, URL) is certain, a line that may be a footnote definition, and
trailing whitespace. Whether a marker would be removed depends only on the marker and the
sources, so ordinary text flows through with no re-parsing. When renumbering, the first stage
also checks each marker that cites a source the same way (in a long paragraph, from a nearby
point where segmenting restarts with the same result) and says where it lands in the parsed
text.

The second stage writes those markers with the numbers `renumber` gives: sources numbered in
the reading order of the markers that cite them, so a marker's numbers are final once every
marker before it is known. It holds a run of adjacent markers (one citation, rewritten as
one) until the text after it shows the run has ended, and a footnote reference until its
definition arrives or the stream ends. Nothing after such a reference can be shown before
then, so the first stage leaves the markers after it unchecked, and the second stage checks
them when it reaches them, all from one segmenting.

A bracketed number that is no citation but names a source (``x[1, 9]``, a number in code)
goes to the second stage too: `renumber` escapes it unless the markers before it already give
its number to that source, which the second stage knows when it reaches it. `renumber` reads
it in the parsed text, where a removal may have changed what is code (``[9]~~~`` opens a
fence once ``[9]`` goes), so the second stage reads and checks it there, as the first stage
checks markers in the text as written.
"""

from __future__ import annotations

import bisect
import operator
import re
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import fields

from unicite._glued import settled as glued_settled
from unicite._marker_syntax import (
    BACKTICKS_RE,
    DEFINITION_RE,
    FOOTNOTE_LABEL,
    INDEX_LOOKBEHIND,
    MARKER_PREFIX_RE,
    MARKER_RE,
    URL_PARENS_PREFIX,
    URL_SCAN,
    Token,
    code_spans,
    marker_spans,
    read_token,
)
from unicite._segment import (
    DELIM_ROW_RE,
    FENCE_RE,
    LIST_RE,
    SETEXT_RE,
    TERM_RE,
    Segment,
    cached_segments,
)
from unicite.exceptions import UsageError
from unicite.markers._parse import (
    REMOVAL_CONTEXT,
    Context,
    Definition,
    OnInvalid,
    Region,
    Scan,
    build_answer,
    is_removable,
    plan_removals,
)
from unicite.markers._renumber import keeps_numbers, named_sources, renumbered, rewrite_marker
from unicite.markers._tokens import ParseStyle
from unicite.model import CitedAnswer

__all__ = ["MarkerStream"]

_OPENER_RE = re.compile("[\\[(<\u3010]")
_VIABLE_MAX = 26_000
_URL_TAIL_RE = re.compile(URL_PARENS_PREFIX)
_URL_TAIL_MAX = 2_700
_REFDEF_TAIL_RE = re.compile(r":[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]{0,20}(?::/?)?|w(?:w(?:w)?)?)?")
_DEFINITION_PREFIX_RE = re.compile(r"[ ]{0,3}(?:\[(?:\^(?:" + FOOTNOTE_LABEL + r"(?:\])?)?)?)?")
_DEFINITION_START_RE = re.compile(r"[ ]{0,3}\[\^" + FOOTNOTE_LABEL + r"\]:")
_HEAD = 64
# A blank line; its match ends where the next line starts.
_BLANK_LINE_RE = re.compile(r"(?:(?<=\n)|(?<=\r)(?!\n))[ \t]*(?:\r\n|\r|\n)")
_LOOKBEHIND = INDEX_LOOKBEHIND
_ANCHOR_LINES = 64  # lines looked back for a new anchor
_TRIGGERS = frozenset("`\n\r")
# What may settle a glued marker waiting for the end of its sentence (`glued_settled`).
_SENTENCE_ENDS = frozenset(".!?\u2026\u3002\uff01\uff1f")
_PLAIN_RE = re.compile("[^\\[(<\u3010`\n\r]*")
_MARKER_ENDS = frozenset("])>\u3011")
_TAIL_KEEP = 4_096  # tail length past which plain chunks trim it too
_SHORT_WINDOW = 64  # below this, segmenting the whole window is as cheap as any shortcut
# One line of plain prose: words in Latin letters (accented ones too) and numbers, spaces,
# common punctuation and quotes, and numeric bracket markers, opening with a letter (see
# `_plain_line`).
_LATIN = "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_PLAIN_LINE_RE = re.compile(
    f"[{_LATIN}][{_LATIN}0-9 .,;:!?'\"()\\[\\]\\-\u2019\u201c\u201d\u00ab\u00bb]*"
)
# What may stand before a restart point: a space, or CJK punctuation (CJK text has no spaces).
_BREAK_RE = re.compile("[ \t\u3001\u3002\uff01\uff0c\uff1a\uff1b\uff1f\u300d\u300f\uff09\u3011]")
# A bracketed number (a superset: `read_token` reads it), and one that reads as a reference
# definition because a "<" follows its colon.
_NUMBER_SHAPE = r"\[\d[\d \t,\u2013\-]*\]"
_NUMBER_SHAPE_RE = re.compile(_NUMBER_SHAPE)
_DEFINED_NUMBER_RE = re.compile(_NUMBER_SHAPE + r"(?=:[ \t]*<)")
_GROUP_WINDOW = 3_000  # longer than any marker (an inline link's URL is at most 2,048)
_GROUP_STEPS = 64
_GLUED_KEPT = 64  # settled glued markers remembered while the walk may read them again


class MarkerStream:
    """Parse citation markers from a streamed answer; emit text that never has to change.

    Feed the chunks as they arrive and show what `feed` returns; `close` returns the rest.
    Everything returned, joined, is exactly ``answer.text``, so the citations' offsets apply
    to what was shown. The answer is the one `parse_markers` gives for the whole text, passed
    through `renumber` (with ``keep_unused``) unless ``renumber=False``: the markers shown
    already carry their final first-cited numbers (``[5] … [2]`` shows as ``[1] … [2]``).

    Text is held back only while it is uncertain: a partial marker at a chunk boundary
    (``… [1`` / ``2]``), a marker that will be removed (a ``[[USAGE:…]]`` tag, an invalid
    marker under ``on_invalid="drop"``) or renumbered until its context (code, URL) is known,
    a line that may be a footnote definition, and trailing whitespace. When renumbering, a
    run of adjacent markers also waits for the text after it (``[3] [1]`` is one citation,
    shown as ``[1][2]``), and a footnote reference ``[^x]`` waits for its definition, which
    decides the source it cites; without one it waits for the end of the stream. Work per
    chunk is proportional to the chunk in ordinary text.

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
        renumber: bool = True,
        keep_unused: bool = False,
    ) -> None:
        """Prepare a stream.

        Args:
            sources: The sources the model was shown, as for `parse_markers`.
            style: Which markers to read, as for `parse_markers`.
            on_invalid: What happens to invalid markers, as for `parse_markers`.
            base: 1 or 0, as for `parse_markers`.
            renumber: Show and return the markers renumbered in first-cited order (see
                `renumber`); False keeps the numbers the model wrote.
            keep_unused: With ``renumber``, keep the sources nothing cites in the answer.

        Raises:
            UsageError: An option is invalid.
        """
        if not isinstance(renumber, bool):
            raise UsageError(f"renumber must be a bool, got {renumber!r}")
        if not isinstance(keep_unused, bool):
            raise UsageError(f"keep_unused must be a bool, got {keep_unused!r}")
        self._context = Context(sources, style=style, on_invalid=on_invalid, base=base)
        self._renumber = renumber
        self._keep_unused = keep_unused
        self._chunks: list[str] = []
        self._offsets: list[int] = []
        self._tail = ""  # the text from _tail_start on: what the next chunks still need
        self._tail_start = 0
        self._size = 0
        self._shown = 0  # raw position up to which the parsed text has been released
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
        # Glued [n] read that more text cannot change, by raw start (tokens at raw offsets).
        self._glued_read: dict[int, Token] = {}
        self._definitions: list[Definition] = []
        self._regions: list[Region] = []  # settled removals not yet passed
        self._anchor = 0  # a line start where segmenting can restart with the same result
        # A point on the last line, a list item, where segmenting may restart for markers
        # further on that line (see `_restarts`).
        self._item_point = -1
        # An open code fence seen by a check: its char, width, first line, lines checked up to.
        self._fence: tuple[str, int, int, int] | None = None
        self._answer: CitedAnswer | None = None
        # Renumbering: markers citing a source, not yet released (raw positions), each with
        # the anchor to check it from later, or -1 when it is known to be a marker.
        self._citing: deque[tuple[Token, int]] = deque()
        # Footnote references whose label has no definition yet (raw start, label): nothing
        # after them can be shown before one arrives, so markers after them are checked then.
        self._undecided: deque[tuple[int, str]] = deque()
        self._last_deferred = -1
        self._verify_from = -1  # the anchor the renumbering stage checks markers from
        self._verify_cache: tuple[int, int, str, list[int]] | None = None
        escape = "brackets" in self._context.kinds  # as `close` passes it to `renumbered`
        self._writer = _Renumberer(self._context, escape) if renumber else None
        self._parked: list[str] = []  # released text the renumbering stage has not taken yet
        self._parsed = 0  # length of the parsed text released
        # Nothing is held but trailing whitespace, and the walk has read everything.
        self._idle = False

    # --- public -----------------------------------------------------------------------------

    def feed(self, chunk: str) -> str:
        """Take the next chunk; return the text that is now certain (possibly empty)."""
        if self._answer is not None:
            raise UsageError("the stream is closed")
        if not isinstance(chunk, str):
            raise UsageError(f"chunks must be str, got {type(chunk).__name__}")
        if not chunk:
            return ""
        # What may settle a pending check: a backtick or line break, or a character after a
        # backtick run that ended the text.
        tick = self._tail.endswith("`")
        ended = self._tail[-1:] in _SENTENCE_ENDS
        self._chunks.append(chunk)
        self._offsets.append(self._size)
        self._tail += chunk
        self._size += len(chunk)
        if self._idle and _PLAIN_RE.fullmatch(chunk) is not None:
            # Nothing here can start a marker, a line or a code span, and nothing before it
            # waits but trailing whitespace: the chunk goes out as it is.
            self._walk = self._line_seen = self._size
            piece = self._tail[self._shown - self._tail_start :].rstrip()
            if not piece:
                return ""
            self._shown += len(piece)
            self._parsed += len(piece)
            if len(self._tail) > _TAIL_KEEP:
                self._trim()
            if self._writer is not None:
                piece = self._renumber_piece(piece, tick)
            if piece:
                self._pieces.append(piece)
            return piece
        trigger = tick or not _TRIGGERS.isdisjoint(chunk)
        self._advance(trigger or ended or not _SENTENCE_ENDS.isdisjoint(chunk))
        piece = self._emit()
        if self._writer is not None:
            piece = self._renumber_piece(piece, trigger)
        if piece:
            self._pieces.append(piece)
        self._trim()
        self._idle = (
            self._blocked < 0
            and self._walk == self._size
            and not self._tokens
            and not self._definitions
            and not self._regions
            and not self._citing
            and ("footnotes" not in self._context.kinds or self._line_dead)
        )
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
        if self._renumber:
            escape = "brackets" in self._context.kinds
            answer = renumbered(answer, keep_unused=self._keep_unused, escape=escape)
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
                if size - o <= _VIABLE_MAX and MARKER_PREFIX_RE.fullmatch(text, o) is not None:
                    block(o)
                    return
                pos = o + 1
                defined = _DEFINED_NUMBER_RE.match(text, o)
                if defined is not None:
                    # A reference definition here may be a number in the parsed text, once
                    # an invalid <sup> after its colon is removed (``[4]:<sup>9</sup>``).
                    self._kept(text, o, defined.end(), lo)
                continue
            e = match.end()
            if not _settled(text, o, e):
                block(o)
                return
            # The scan reads each sentence separately; a match holding a sentence end (an
            # assistant label "a. B") may be cut there, and then its inside is read.
            if TERM_RE.search(text, o, e) is None:
                pos = e
            else:
                pos = o + 1
                if o >= outer[1]:
                    outer = (o, e)
            token = self._read(text, o, e, lo)
            # How a glued [n] that names sources reads may depend on the rest of its sentence.
            if (
                token is not None
                and token.glued is not None
                and context.names_sources(token)
                and not glued_settled(text, o, e, token.glued)
            ):
                block(o, waiting=True)  # until a sentence or line may have ended after it
                return
            # A match that stays in the text as no citation may hold numbers `renumber`
            # escapes: `_kept` hands them to the renumbering stage.
            if token is None or not context.accepts(token):
                self._kept(text, o, e, lo, token)
                continue
            ids, _ = context.resolve(token)
            removable = is_removable(token, context, ids, text[max(0, o - REMOVAL_CONTEXT) : o])
            footnote = token.kind == "footnotes"
            if not removable:
                # A footnote's source depends on a definition that may come later.
                if not (self._renumber and (ids or footnote)):
                    self._kept(text, o, e, lo, token)
                    continue
                if self._deferring(lo + o):
                    if lo + o > self._last_deferred:
                        self._last_deferred = lo + o
                        self._citing.append((_shift(token, lo), self._anchor))
                        if footnote:
                            self._undecided.append((lo + o, token.label or ""))
                    continue
            verdict = self._check(lo + o, lo + e)
            if verdict == "pending":
                block(o, waiting=True)
                return
            if verdict == "marker" and lo + o >= self._found_until:
                if removable:
                    self._tokens.append(_shift(token, lo))
                else:
                    self._citing.append((_shift(token, lo), -1))
                    if footnote:
                        self._undecided.append((lo + o, token.label or ""))
                self._found_until = lo + e
            elif verdict == "text":
                self._kept(text, o, e, lo, token)  # code here, perhaps not in the parsed text
        self._walk = self._size

    def _read(self, text: str, o: int, e: int, lo: int) -> Token | None:
        """`read_token` of the match at ``o..e``, remembered once more text cannot change it.

        A walk held up before a glued ``[n]`` (inline code not closed yet, a sentence not
        ended) reads it again on the next chunk; a glued marker that reads as no citation is
        settled (see `unicite._glued.settled`), and is not read again.
        """
        known = self._glued_read.get(lo + o)
        if known is not None and known.end == lo + e:
            return _shift(known, -lo)
        token = read_token(text, o, e)
        if (
            token is not None
            and token.indexing
            and token.glued is not None
            and glued_settled(text, o, e, token.glued)
        ):
            if len(self._glued_read) >= _GLUED_KEPT:
                self._glued_read.clear()
            self._glued_read[lo + o] = _shift(token, lo)
        return token

    def _kept(self, text: str, o: int, e: int, lo: int, read: Token | None = None) -> None:
        """Hand the renumbering stage what `renumber` may escape in a match that stays text.

        `renumber` escapes bracketed numbers that are no citation but name a source, and it
        reads them in the parsed text: the renumbering stage reads and checks them there. That
        is the match itself, or the numbers inside another kind of match (``<sup>[4]</sup>``),
        which a removal before it may unmake (a <sup> glued to a word is none).
        """
        writer = self._writer
        if writer is None or not writer.escape:
            return
        if text[o] == "[":
            spans = [(o, e)]
        else:
            spans = [m.span() for m in _NUMBER_SHAPE_RE.finditer(text, o + 1, e)]
        for a, b in spans:
            token = read if read is not None and (a, b) == (o, e) else read_token(text, a, b)
            if token is not None and writer.named(token) and lo + a >= self._found_until:
                self._citing.append((_shift(token, lo), _IN_PARSED))
                self._found_until = lo + b

    def _deferring(self, position: int) -> bool:
        """Whether a footnote reference before ``position`` still waits for its definition."""
        undecided = self._undecided
        writer = self._writer
        while undecided and (writer is None or not writer.undecided(undecided[0][1])):
            undecided.popleft()
        return bool(undecided) and undecided[0][0] < position

    def _scan_lines(self) -> None:
        """Find footnote definitions, line by line, each line read once.

        Lines start where `DEFINITION_RE` says they do: at the start and after a line feed; a
        lone carriage return ends a definition but starts no line.
        """
        self._line_hold = -1
        size = self._size
        while self._line < size:
            if self._line_dead:
                brk = self._slice(self._line_seen, size).find("\n")
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
                self._read_definition(line, m)
            self._line_dead = True
            self._line_seen = line + brk

    def _read_definition(self, line: int, m: re.Match[str]) -> None:
        """Keep a definition that names a source (it is removed) or that decides a label."""
        label = m.group(1)
        sid, problem = self._context.define(label, m.group(2))
        writer = self._writer
        if writer is not None and not writer.undecided(label):
            writer = None
        if (sid is None and writer is None) or self._in_code(line + m.start(1)):
            return
        if sid is not None:
            self._definitions.append(Definition(line, line + m.end(), label, sid, problem))
        if writer is not None:
            writer.define(label, (sid, problem))

    def _in_code(self, position: int) -> bool:
        """Whether a position on a complete line lies in a code block (as `segment` says)."""
        if self._inside_fence(position):
            return True
        window = self._slice(self._anchor, self._size)
        segs, starts = cached_segments(window)
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
        """Whether the marker at ``o..e`` (one to remove or renumber) is a marker of the final text.

        Returns ``"marker"``, ``"text"`` (code, URL, indexing…) or ``"pending"`` when text
        still to come can change it (an unpaired backtick before it, a line that may be a
        code fence).
        """
        if self._inside_fence(o):
            return "text"
        anchor = self._anchor
        if self._fence is None and anchor < self._item_point < o:
            # Further on a list item line: read from the restart point found on it before.
            base = self._item_point
            window = self._slice(base, self._size)
            rel, rel_end = o - base, e - base
            point, _ = _restarts(window, rel, 0)
            if point >= 0:
                verdict = self._verdict(window[point:], rel - point, rel_end - point)
                self._item_point = base + point
                return _unless_line_turns(window, rel, rel_end, verdict)
        self._item_point = -1
        window = self._slice(anchor, self._size)
        rel, rel_end = o - anchor, e - anchor
        if self._fence is None and rel > _SHORT_WINDOW:
            point, start = _restarts(window, rel)
            p = point if point >= 0 else start
            if p > 0:
                verdict = self._verdict(window[p:], rel - p, rel_end - p)
                if point >= 0 and start != point:
                    self._item_point = anchor + point
                if start > 0:
                    self._anchor += start
                return _unless_line_turns(window, rel, rel_end, verdict)
        verdict = self._verdict(window, rel, rel_end, anchored=True)
        return _unless_line_turns(window, rel, rel_end, verdict)

    def _verify(self, token: Token, anchor: int) -> str:
        """`_check` for a marker whose check was put off, from an anchor before it.

        The renumbering stage checks the markers it holds in text order; all of them are
        checked from the first one's anchor (an earlier anchor is as good), so one segmenting
        serves them all. The anchor is the current one when that is not past the marker,
        else the one noted when its check was put off.
        """
        if self._anchor <= token.start:
            anchor = self._anchor
        if self._verify_from < 0 or anchor < self._verify_from:
            self._verify_from = anchor
        start = self._verify_from
        if self._inside_fence(token.start):
            return "text"
        cache = self._verify_cache
        if cache is None or cache[0] != start or cache[1] != self._size:
            window = self._slice(start, self._size)
            blanks = [m.end() for m in _BLANK_LINE_RE.finditer(window)]
            cache = self._verify_cache = (start, self._size, window, blanks)
        rel, rel_end = token.start - start, token.end - start
        verdict = self._verdict(cache[2], rel, rel_end, blank_ends=cache[3])
        return _unless_line_turns(cache[2], rel, rel_end, verdict)

    def _verdict(
        self,
        window: str,
        rel: int,
        rel_end: int,
        *,
        anchored: bool = False,
        blank_ends: list[int] | None = None,
    ) -> str:
        """`_check` on ``window``, which starts at the anchor, an earlier one or a restart point.

        Only a check from the anchor moves it and remembers an open code fence.
        ``blank_ends`` lists where the blank lines of ``window`` end.
        """
        if _plain_line(window, rel):
            return "marker" if _marks_line(window, rel, rel_end) else "text"
        segs, starts = cached_segments(window)
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
            if anchored:
                self._remember_fence(window, seg.start, seg.end)
            return "text"
        if blank_ends is None:
            blanks = [m.end() for m in _BLANK_LINE_RE.finditer(window, 0, rel)]
            block = blanks[-1] if blanks else 0
        else:
            n = bisect.bisect_right(blank_ends, rel)
            block = blank_ends[n - 1] if n else 0
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
            codes = code_spans(window, lo, hi)
            closed = [c[0] for c in codes]
            for run in BACKTICKS_RE.finditer(window, lo, min(hi, rel)):
                i = bisect.bisect_right(closed, run.start()) - 1
                if i < 0 or run.start() >= codes[i][1]:
                    return "pending"
                if header_risk and _has_break(window, codes[i][0], codes[i][1]):
                    return "pending"
        if anchored:
            self._move_anchor(window, segs, starts, line_start)
        spans = marker_spans(window, seg.start, seg.end, indexing=True)
        return "marker" if (rel, rel_end) in spans else "text"

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
        k = bisect.bisect_right(starts, line) - 1
        if k >= 0 and line < segs[k].end and segs[k].kind == "code":
            return False
        return _opens_block(window, line)

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
        m = FENCE_RE.match(window, start)
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
            spans = marker_spans(text, 0, len(text), indexing=True)
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
        """Release the parsed text up to ``limit``: removed spans out, trailing whitespace held."""
        start = self._shown
        if limit <= start:
            return ""
        raw = self._slice(start, limit)
        if not self._regions and not self._citing:
            piece = raw.rstrip()
            self._shown = start + len(piece)
            self._parsed += len(piece)
            return piece
        runs: list[tuple[int, str]] = []  # (raw position, text) of what stays, in order
        position = start
        for region in self._regions:
            if region.end <= position or region.start >= limit:
                continue
            if region.start > position:
                runs.append((position, raw[position - start : region.start - start]))
            position = max(position, region.end)
        if position < limit:
            runs.append((position, raw[position - start :]))
        while runs and not runs[-1][1].strip():
            runs.pop()
        if not runs:
            return ""
        at, last = runs[-1]
        runs[-1] = (at, last.rstrip())
        self._shown = at + len(runs[-1][1])
        self._regions = [r for r in self._regions if r.end > self._shown]
        if self._citing and self._writer is not None:
            self._place(runs, self._writer)
        piece = "".join(part for _, part in runs)
        self._parsed += len(piece)
        return piece

    def _renumber_piece(self, piece: str, trigger: bool) -> str:
        """Pass released parsed text to the renumbering stage; return what it lets through."""
        writer = self._writer
        if writer is None:
            return piece
        if writer.awaits_definition:
            # Nothing goes out before the definition: gather the text until then.
            if piece:
                self._parked.append(piece)
            return ""
        if self._parked:
            self._parked.append(piece)
            piece = "".join(self._parked)
            self._parked = []
        self._verify_from = -1
        return writer.take(piece, self._verify, trigger)

    def _place(self, runs: list[tuple[int, str]], writer: _Renumberer) -> None:
        """Hand the released citing markers to the renumbering stage, at parsed positions."""
        parsed = self._parsed
        citing = self._citing
        for at, part in runs:
            end = at + len(part)
            while citing and citing[0][0].start < end:
                token, anchor = citing.popleft()
                # A marker before this run was removed with its footnote definition line.
                if token.start >= at and token.end <= end:
                    start = parsed + token.start - at
                    writer.add(start, start + token.end - token.start, token, anchor)
            parsed += len(part)


class _ParsedText(MarkerStream):
    """The parsed text, for the walk's checks: where `renumber` reads numbers that cite nothing.

    Only the text and the checks of `MarkerStream` are used: `append` adds released text, and
    `check` says whether a match is a marker of that text, as `_check` does for the text as
    written (anchored, remembering an open code fence, ``"pending"`` while text to come can
    change it).
    """

    def __init__(self) -> None:
        super().__init__((), renumber=False)

    def append(self, piece: str) -> None:
        """Add released parsed text (slices read the chunks: no tail is kept)."""
        self._chunks.append(piece)
        self._offsets.append(self._size)
        self._size += len(piece)
        self._tail_start = self._size

    def window(self, start: int) -> str:
        """The text from ``start`` on."""
        return self._slice(start, self._size)

    def check(self, start: int, end: int) -> str:
        """`MarkerStream._check` on this text."""
        return self._check(start, end)


class _Mark:
    """A marker citing a source (or a footnote reference that may), in the parsed text.

    Or a bracketed number that cites nothing but names a source: `renumber` may escape it.
    """

    __slots__ = ("anchor", "end", "ids", "start", "stray", "token", "verdict")

    def __init__(
        self, start: int, end: int, token: Token, ids: list[str] | None, anchor: int
    ) -> None:
        self.start = start
        self.end = end
        self.token = token
        """The marker, at its raw position (a stray one at its parsed one, once read there)."""
        self.ids = ids
        """The sources it cites; None while a footnote's definition may still come."""
        self.stray = anchor == _IN_PARSED
        """It cites nothing but names a source by number; checked (and its span and token
        read) in the parsed text, where `renumber` reads it."""
        self.anchor = anchor
        """Where to check it from, when that was put off."""
        self.verdict: str | None = "marker" if anchor == -1 else None
        """What the check said: ``"marker"``, ``"text"``, ``"pending"``; None: not checked."""


_Verify = Callable[[Token, int], str]
_IN_PARSED = -2
"""The anchor of a bracketed number that is no citation: it is checked in the parsed text."""


class _Renumberer:
    """Rewrite the markers of the parsed text, as it is released, with first-cited numbers.

    Markers next to each other (only spaces or tabs between them) make one citation, which
    `renumber` rewrites as a whole with its numbers ascending: such a run is held until the
    text after it is known. A footnote reference is held until its label is defined. Markers
    whose check was put off are checked here, in order, when they are reached.
    """

    def __init__(self, context: Context, escape: bool) -> None:
        self._context = context
        self.escape = escape
        """Bracketed numbers that are no citation are escaped (else left as written)."""
        self._ids = [source.id for source in context.table.sources]
        self._parts: list[str] = []  # parsed text from _base on, not yet shown
        self._base = 0
        self._size = 0
        self._marks: list[_Mark] = []
        self._head = 0  # first mark not yet shown
        self._run = 0  # marks from _head known to belong to the run at _head
        self._run_end = 0  # where those marks end
        self._done = 0  # end of the last marker shown: marks starting before it were inside it
        self._numbers: dict[str, int] = {}
        self._waiting: dict[str, list[_Mark]] = {}  # undecided footnotes by label
        self._footnotes: dict[str, tuple[str | None, str | None]] = {}  # first definitions
        self._blocker: _Mark | None = None  # the mark the text waits on
        self.awaits_definition = False
        """The text waits on a footnote reference whose label has no definition yet."""
        self._parsed = _ParsedText()  # all the parsed text taken, to check numbers in
        self._tick = False  # that text ends with a backtick

    def add(self, start: int, end: int, token: Token, anchor: int) -> None:
        """A marker citing a source (or a footnote that may) at ``start..end``.

        ``anchor`` is where to check it from, -1 when it is known to be a marker, or
        `_IN_PARSED` for a bracketed number that is no citation.
        """
        ids: list[str] | None
        if anchor == _IN_PARSED:
            ids = []
        elif token.kind == "footnotes":
            label = token.label or ""
            entry = self._footnotes.get(label)
            ids = None if entry is None else self._context.resolve(token, {label: entry})[0]
        else:
            ids = self._context.resolve(token)[0]
        mark = _Mark(start, end, token, ids, anchor)
        self._marks.append(mark)
        if ids is None:
            self._waiting.setdefault(token.label or "", []).append(mark)

    def named(self, token: Token) -> list[tuple[int, str]]:
        """The sources a bracketed number names if it is no citation (see `named_sources`)."""
        return named_sources(token, self._ids)

    def undecided(self, label: str) -> bool:
        """Whether no definition of ``label`` has been seen (the first one decides)."""
        return label not in self._footnotes

    def define(self, label: str, entry: tuple[str | None, str | None]) -> None:
        """The first definition of a footnote label: what its references cite is now known."""
        self._footnotes[label] = entry
        for mark in self._waiting.pop(label, ()):
            mark.ids = self._context.resolve(mark.token, {label: entry})[0]
        if self._blocker is not None and self._blocker.ids is not None:
            self.awaits_definition = False

    def take(self, piece: str, verify: _Verify, trigger: bool) -> str:
        """Take the next released parsed text; return what can be shown now.

        ``verify`` checks a marker whose check was put off; ``trigger`` says a pending check
        may have settled.
        """
        if piece:
            self._parsed.append(piece)
            trigger = trigger or self._tick or not _TRIGGERS.isdisjoint(piece)
            self._tick = piece.endswith("`")
        if self._head == len(self._marks) and not self._parts:
            self._size += len(piece)  # nothing is held: the text passes through
            self._base = self._size
            return piece
        if piece:
            self._parts.append(piece)
            self._size += len(piece)
        blocker = self._blocker
        if blocker is not None and (
            blocker.ids is None or (blocker.verdict == "pending" and not trigger)
        ):
            return ""  # still waiting on a footnote's definition or a pending check
        self._blocker = None
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        text = self._parts[0] if self._parts else ""
        base, size = self._base, self._size
        marks = self._marks
        out: list[str] = []
        shown = base  # parsed position shown up to
        stop = size
        while self._head < len(marks):
            first = marks[self._head]
            state = "text" if first.start < self._done else self._state(first, verify, trigger)
            if state in ("footnote", "pending"):
                self._blocker = first
                self.awaits_definition = state == "footnote"
                stop = first.start
                break
            if state == "stray":
                # Escaped unless the numbers shown so far already give it its source.
                written = text[first.start - base : first.end - base]
                escaped = not keeps_numbers(self.named(first.token), self._numbers)
                out.append(text[shown - base : first.start - base])
                out.append("\\" + written if escaped else written)
                shown = self._done = first.end
            if state != "marker":
                self._head += 1
                self._run = 0
                continue
            j = self._head + max(1, self._run)
            end = self._run_end if self._run else first.end
            ended = False
            while True:
                while j < len(marks) and marks[j].start < end:
                    j += 1  # inside the run's last marker
                k = end
                while k < size and text[k - base] in " \t":
                    k += 1
                if k >= size:
                    break
                if j < len(marks) and marks[j].start == k:
                    state = self._state(marks[j], verify, trigger)
                    if state in ("footnote", "pending"):
                        self._blocker = marks[j]
                        self.awaits_definition = state == "footnote"
                        break
                    if state == "marker":
                        end = marks[j].end
                        j += 1
                        continue
                ended = True
                break
            if not ended:
                self._run = j - self._head
                self._run_end = end
                stop = first.start
                break
            out.append(text[shown - base : first.start - base])
            out.append(self._rewrite(text[first.start - base : end - base], marks[self._head : j]))
            shown = self._done = end
            self._head = j
            self._run = 0
        if stop > shown:
            out.append(text[shown - base : stop - base])
            shown = stop
        if shown > base:
            self._parts = [text[shown - base :]] if shown < size else []
            self._base = shown
        if self._head > 64 and self._head * 2 > len(marks):
            del marks[: self._head]
            self._head = 0
        return "".join(out)

    def _state(self, mark: _Mark, verify: _Verify, trigger: bool) -> str:
        """What a mark is now: ``"footnote"`` (undecided), ``"pending"`` or plain text.

        Else ``"marker"`` when it cites, or ``"stray"`` for a number that is no citation, to
        escape or not.
        """
        if mark.ids is None:
            return "footnote"
        if not mark.ids and not mark.stray:
            return "text"
        verdict = mark.verdict
        if verdict is None or (verdict == "pending" and trigger):
            if not mark.stray:
                verdict = verify(mark.token, mark.anchor)
                if verdict == "text" and self.escape and self.named(mark.token):
                    mark.ids, mark.stray = [], True  # no citation: as any number in text
            if mark.stray:
                verdict = self._check_stray(mark)
            mark.verdict = verdict
            if verdict is None:
                return "pending"  # the text after it may still change what it reads as
        if mark.stray and verdict == "marker":
            return "stray"
        return verdict

    def _check_stray(self, mark: _Mark) -> str | None:
        """Whether a bracketed number that is no citation is a marker in the parsed text.

        `renumber` reads such numbers in the parsed text, where a removal may have changed what
        is code (``[9]~~~`` loses its marker and opens a fence) or what follows a number (a
        ``(`` after it makes it link text): the number is read again there, then checked as
        the walk checks markers. None while the text after it may still change its match.
        """
        parsed = self._parsed
        lo = max(0, mark.start - _LOOKBEHIND)
        window = parsed.window(lo)
        rel = mark.start - lo
        match = MARKER_RE.match(window, rel)
        if match is None:
            return "text"
        if not _settled(window, rel, match.end()):
            return None
        token = read_token(window, rel, match.end())
        if token is None or not self.named(token):
            return "text"
        mark.token = _shift(token, lo)
        mark.end = lo + match.end()
        return parsed.check(mark.start, mark.end)

    def _rewrite(self, marker: str, run: list[_Mark]) -> str:
        numbers: set[int] = set()
        for mark in run:
            if mark.verdict == "marker":
                for sid in mark.ids or ():
                    numbers.add(self._numbers.setdefault(sid, len(self._numbers) + 1))
        new = rewrite_marker(marker, sorted(numbers))
        return marker if new is None else new


def _opens_block(window: str, line: int) -> bool:
    """Whether the line at ``line`` (> 0) starts a block wherever parsing starts, unless in code.

    It starts at column 0 and either follows a blank line (and is not a wholly bold line) or
    is a list item (and not a setext underline or a table delimiter row).
    """
    end = _line_end(window, line)
    if line >= end or window[line] in " \t`~":
        return False
    before = line - (2 if window.startswith("\r\n", line - 2) else 1)
    previous = _last_break(window, before) + 1
    if not window[previous:before].strip():  # after a blank line
        return window[line] not in "*_" or LIST_RE.match(window, line, end) is not None
    return (
        LIST_RE.match(window, line, end) is not None
        and SETEXT_RE.match(window, line, end) is None
        and not ("|" in window[line:end] and DELIM_ROW_RE.match(window, line, end))
    )


def _restarts(window: str, rel: int, known: int = -1) -> tuple[int, int]:
    """Where segmenting ``window`` may restart for the marker at ``rel``, and a new anchor.

    ``window`` runs from the anchor to the end of the text so far. Returns a point on the
    marker's line, or -1, and a point where segmenting restarts with the same result for
    all that follows (a new anchor), or -1:

    - When the marker lies on the last line, and that line alone is a block (it follows a
      blank line and opens with a letter, or it is a list item) with no ``|``, any point
      ``p`` on it that is a letter after a space, a tab or CJK punctuation serves, provided no
      marker match straddles ``p`` and every backtick run before it on the line is closed
      before it (and, after punctuation, nothing just before it looks like a URL). Segmenting
      from ``p`` then finds the same sentence boundaries after ``p`` (each reads only nearby
      text, and the marker matches and code spans after ``p`` are the same); the segment
      holding the marker may start later, but nothing the check reads depends on that: the
      matches and code spans from its start to the marker are the same, and neither the
      indexing test nor the ``]`` test looks past ``p``, a letter after a non-word character.
    - A line that opens a block (`_opens_block`) with no code fence opening before it in
      ``window``: the block parser's state is fresh there, so segmenting from it gives what
      segmenting the whole window gives. The latest one shortly before the marker serves.

    Both serve the markers after this one too, as what makes them restart points lies
    before them: ``window`` may itself start at such a ``p``. A block start is an anchor for
    all that follows; so is ``p`` on a paragraph line (a paragraph passes no state on to the
    lines after it that it would not pass from ``p``), but not on a list item, whose
    indentation decides how the lines after it are read: there ``p`` is returned with no
    anchor, and a later call for a marker further on the same line passes it as ``known``
    to search on from it.
    """
    if known >= 0:
        if _line_break(window, known) >= 0 or "|" in window[known:]:
            return -1, -1
        found = _restart_point(window, known, rel)
        return (found if found >= 0 else known), -1
    line = _last_break(window, rel) + 1
    fences = [i for i in (window.find("```", 0, line), window.find("~~~", 0, line)) if i >= 0]
    limit = min(fences) if fences else len(window)
    block = -1
    q = line
    for _ in range(_ANCHOR_LINES):
        if q <= 0:
            break
        if q <= limit and _opens_block(window, q):
            block = q
            break
        q = _last_break(window, q - 1) + 1
    head = window[line : line + 1]
    item = LIST_RE.match(window, line) is not None
    if (
        (line > 0 and block != line)
        or _line_break(window, rel) >= 0
        or "|" in window[line:]
        or not (head.isalpha() or item)
    ):
        return -1, block
    p = _restart_point(window, line, rel)
    if p < 0:
        return -1, block
    return p, (block if item else p)


def _restart_point(window: str, start: int, rel: int) -> int:
    """The latest restart point (see `_restarts`) after ``start`` and before ``rel``, or -1.

    ``start`` is the start of the marker's line, or a restart point on it.
    """
    if _plain(window):
        # Numeric brackets hold no letter, there is no code span and no CJK punctuation: the
        # latest letter after a space is the point.
        space = window.rfind(" ", start, rel - 1)
        while space >= 0:
            if window[space + 1].isalpha():
                return space + 1
            space = window.rfind(" ", start, space)
        return -1
    # Where the line stops being a place to restart: inside a marker match or a code span,
    # or after a backtick run that is not closed yet.
    inside = [m.span() for m in MARKER_RE.finditer(window, start, len(window))]
    codes = code_spans(window, start, rel)
    bound = rel
    for run in BACKTICKS_RE.finditer(window, start, rel):
        c = bisect.bisect_right(codes, (run.start(), len(window))) - 1
        if c < 0 or run.start() >= codes[c][1]:
            bound = run.start()  # not closed: no restart after it
            break
    inside.extend(codes)
    for m in reversed(list(_BREAK_RE.finditer(window, start, bound - 1))):
        p = m.end()
        if not window[p].isalpha() or any(a < p < b for a, b in inside):
            continue
        if m.group() not in " \t":
            # A URL test reads back to the last space: nothing there may look like one.
            around = window[max(0, p - URL_SCAN) : p + 4].lower()
            if "://" in around or "www." in around or window[p] in "wW":
                continue
        return p
    return -1


def _unless_line_turns(window: str, rel: int, rel_end: int, verdict: str) -> str:
    """``verdict``, or ``"pending"`` while the marker's line may still become a single segment.

    A one-line paragraph becomes a setext heading, and a line with a ``|`` a table row, when
    the next line turns out to be an underline or a delimiter row. The line is then one
    segment, and in rare cases (a marker opening a sentence that follows a CJK full stop with
    no space, glued to ``_`` or ``]``) that changes whether the marker is one.
    """
    if verdict == "pending" or _plain_line(window, rel):
        return verdict  # a plain line's sentences read its markers as the line does
    brk = _line_break(window, rel)
    if brk >= 0:
        following = brk + (2 if window.startswith("\r\n", brk) else 1)
        if _line_break(window, following) >= 0 or window[following:].strip(" \t=-|:"):
            return verdict  # the next line is complete, or is neither kind of underline
        # The next line so far may already make the line one segment: read it without.
        head = window[:brk]
        segs, starts = cached_segments(head)
        k = bisect.bisect_right(starts, rel) - 1
        alone = (
            k >= 0
            and rel < segs[k].end
            and segs[k].kind != "code"
            and (rel, rel_end) in marker_spans(head, segs[k].start, segs[k].end, indexing=True)
        )
    else:
        alone = verdict == "marker"
    line = _last_break(window, rel) + 1
    while line < rel and window[line] in " \t":
        line += 1
    whole_line = (rel, rel_end) in marker_spans(
        window, line, brk if brk >= 0 else len(window), indexing=True
    )
    if whole_line != alone:
        return "pending"
    return "marker" if alone else "text"


def _plain_line(window: str, rel: int) -> bool:
    """Whether a check of the marker at ``rel`` may read ``window``'s markers as one line.

    True for one line of plain prose (`_PLAIN_LINE_RE`: no code, no line or block syntax, no
    URL scheme, no HTML) with no ``[[`` or ``](`` (so its only markers are numeric brackets,
    ``[1]``, ``[2, 3]``, ``[2-4]``) and no ``]`` glued before the marker. Segmenting it
    finds one paragraph split into sentences, and a numeric bracket holds no sentence end, so
    no boundary falls inside one and each boundary is followed by a space (in Latin script a
    sentence starts after a space, unlike in CJK text): the markers of the sentence holding
    the marker are the line's markers inside it, scanned from the same place with the same
    look-around, and the line turning into a heading or a table row would not change them.
    `_verdict` and `_unless_line_turns` then read the line's markers instead of segmenting it.
    """
    return _plain(window) and window[rel - 1] != "]"


def _plain(window: str) -> bool:
    """One line of plain prose whose only markers are numeric brackets (see `_plain_line`)."""
    return (
        _PLAIN_LINE_RE.fullmatch(window) is not None and "[[" not in window and "](" not in window
    )


def _marks_line(window: str, rel: int, rel_end: int) -> bool:
    """Whether the match at ``rel..rel_end`` is a marker of the line ``window``."""
    return (rel, rel_end) in marker_spans(window, 0, len(window), indexing=True)


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
    """`token` ``delta`` characters further: `dataclasses.replace` of its span, built directly."""
    start, end, *rest = _TOKEN_VALUES(token)
    return Token(start + delta, end + delta, *rest)


# Every field of a Token in order, read in one call; a Token's span comes first.
_TOKEN_VALUES = operator.attrgetter(*(f.name for f in fields(Token)))
if [f.name for f in fields(Token)][:2] != ["start", "end"]:  # pragma: no cover
    raise ImportError("Token's first fields must be its span (start, end)")


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
