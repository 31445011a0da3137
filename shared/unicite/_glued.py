"""Whether a ``[n]`` glued to the text before it is a citation or an index.

Models glue citation markers to words (``France[1]``, ``OpenAI[2]``, ``1952[3]``, ``東京[2]``);
answers about programming write indexes the same way (``arr[2]``, ``self.items[1]``,
``f(x)[1]``). The numbers decide nothing (both name given sources), so the rule reads the
expression before the bracket and the text around it, and weighs the signals together:

- an index: ``[0]``; a one-letter lowercase name; snake_case; lower camelCase (``myList``); a
  lowercase name with digits or no vowel (``row2``, ``dp``, ``lst``); an attribute or a call
  (``obj.items[1]``, ``f(x)[1]``); the same name indexed nearby with a letter, ``0`` or an
  expression (``a[i]``, ``row[0]``), or a lowercase word glued to brackets twice
  (``nums[1] … nums[2]``); a letter subscript or an operator right after (``dp[1][j]``,
  ``x[1] = 0``); an operator right before (``y = x[1]``);
- a citation: a number, percentage or year (``2.4%[1]``, ``1952[3]``) or a quantity
  (``$68.7 billion[2]``, ``9,289 km[2]``) before it; a name (a capitalised word, an acronym,
  a brand such as ``iPhone``, ``GPT-4o``, ``CO2``); a word in another script or with accents
  (``東京``, ``Köln``); a sentence or clause ending right after a lowercase word;
- against a citation: programming words or operators on the line (``element``, ``array``,
  ``stored``, ``=``, a language name), which make a name need a clause end after it and a
  lowercase word stay text; a plain ASCII word in a sentence with other letters (``temps``
  in Polish prose), which reads as a name from code.

A glued marker is a citation only when the citation signals win with no index signal; else it
stays text, and the parsers report why (`GluedReading.why`). The rule reads at most
`LOOKBEHIND` characters before the bracket and, after the run of markers, up to the end of the
sentence or line (at most `LOOKAHEAD` characters): `MarkerStream` waits for that much text
(`settled`) and then decides exactly as the parse of the whole text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["LOOKAHEAD", "LOOKBEHIND", "GluedReading", "glued_reading", "settled"]

LOOKBEHIND = 160
"""How far back from a ``[`` the rule reads: the word, its line, the same name indexed before."""
LOOKAHEAD = 160
"""How far past a run of markers the rule reads, when no sentence or line ends sooner."""

Reading = Literal["citation", "index", "unsure"]


@dataclass(frozen=True, slots=True)
class GluedReading:
    """What a glued ``[n]`` reads as, and the signal that decided it."""

    reading: Reading
    why: str
    ahead: bool = False
    """Whether the text after the run of markers took part (`settled` waits for it)."""


# A numeric bracket (the `MARKER_RE` numeric shape), and its run continuing.
_NUMERIC_RE = re.compile(r"\[\d{1,4}(?:[ \t]*[,\u2013\-][ \t]*\d{1,4}){0,40}\]")
_NUMERIC_PREFIX_RE = re.compile(r"\[(?:\d{1,4}(?:[ \t]*(?:[,\u2013\-][ \t]*(?:\d{1,4})?)?)*)?")
_ASCII_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_ZERO_RE = re.compile(r"(?<!\d)0(?!\d)")
_SENTENCE_BREAK_RE = re.compile(
    "[.!?\u2026](?:\\[\\d[\\d ,\u2013\\-]{0,40}\\])*(?=\\s)|[\u3002\uff01\uff1f]"
)
_ACCENTED_RE = re.compile(r"[^\W\d_A-Za-z]")
_PERCENT_RE = re.compile("\\d[ \u00a0\u202f]?[%\u2030]$")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A quantity before the word: a number, maybe with a currency or a degree sign, then at most
# two words (``$68.7 billion``, ``9,289 km``, ``50 basis points``, ``90 °C``).
_QUANTITY_RE = re.compile(
    "(?:^|[^\\w.,])[$\u20ac\u00a3\u00a5]?\\d(?:[\\d,.]*\\d)?"
    "(?:[ \u00a0\u202f]?\u00b0|((?:[ \u00a0\u202f]+[A-Za-z/]{1,20}){0,2})[ \u00a0\u202f]+)$"
)
# Words that end a quantity before they reach a unit (``1066 and dates`` is none).
_NOT_UNITS = _words(
    "and or but nor so then than as if is are was were be been to in on at by for with from "
    "of that which while when where"
)
_RANGE_RE = re.compile("\\d+(?:[.,]\\d+)*(?:[\\-\u2013]\\d+(?:[.,]\\d+)*)?")
_VERSION_RE = re.compile(r"\d\.\d+$")
_EXPR_SPAN = 100  # how far before its last word an expression is read
_LOWER_CAMEL_RE = re.compile(r"[a-z]{2,}[A-Z]")
_VOWELS = frozenset("aeiouyAEIOUY")
# A sentence ends at one of these followed by white space or the end; a line break ends it too.
_TERMINALS = frozenset(".!?\u2026\u3002\uff01\uff1f")
_CLAUSE_END = frozenset(".,;:!?\u2026)]}\"'\u201d\u2019\u00bb*")
_CJK_CLAUSE_END = frozenset("\u3002\uff0c\u3001\uff1b\uff1a\uff01\uff1f\uff09\u300d\u300f")
# Right after the run: a subscript that is no marker, an attribute, or an assignment/operator.
_INDEX_AFTER_RE = re.compile(
    r"\[(?!\d{1,4}(?:[ \t]*[,\u2013\-][ \t]*\d{1,4}){0,40}\])"
    r"|\.[A-Za-z_]"
    r"|[ \t]*(?:[=!<>+\-*/%]=|=>|->|:=|\+\+|--|<<|>>|&&|\|\|)"
    r"|[ \t]*=(?!=)"
    r"|[ \t]+[+*/%<>][ \t]"
)
# Right before the expression: an assignment, a comparison or ``+`` after an operand and before
# a space (not Markdown's ``**bold**``, a bullet, a table's ``|``, an HTML tag), an opening call
# (``len(arr[1]``), ``return``.
_INDEX_BEFORE_RE = re.compile(
    r"(?:[\w)\]][ \t]*(?:[=!<>+\-*/]?=|\+)[ \t]+|\breturn[ \t]+|[A-Za-z_]\([ \t]*)$"
)


# Programming in the sentence. A word list alone would cite by vocabulary; here it only makes
# a name need a clause end after it and keeps a lowercase word from being cited.
_CODE_WORDS = _words(
    # English
    "array arrays element elements index indexes indices list lists argument arguments arg "
    "args variable variables var vars parameter parameters param params matrix matrices "
    "vector vectors tuple tuples dict dictionary dictionaries subscript subscripts slice "
    "slices pointer pointers buffer buffers integer integers int ints float floats boolean "
    "booleans offset offsets attribute attributes zero-based 0-based one-based 1-based null "
    "len "
    # German, French, Spanish, Portuguese, Italian, Dutch, Polish, Turkish, Russian
    "liste funktion variablen élément éléments elément eléments tableau tableaux indice "
    "elemento elementos índice índices arreglo arreglos lista listas vetor vetores variável "
    "variáveis vettore vettori variabile variabili lijst tablica tablicy dizi список"
)
_CODE_STEMS = (
    "iterat",
    "assign",
    "matriz",
    "matric",
    "zmienn",
    "dizin",
    "eleman",
    "değişken",
    "degisken",
    "массив",
    "элемент",
    "индекс",
    "списк",
    "переменн",
    "матриц",
    "аргумент",
)
# Verbs of code in lower case only ("the App Store" is a name), and language names only
# capitalised ("Rust", not "rust").
_CODE_VERBS = frozenset(("store", "stores", "stored", "storing"))
_LANGUAGES = _words(
    "Python JavaScript TypeScript Java Rust Golang Ruby PHP Swift Kotlin Scala Haskell Lua "
    "Perl MATLAB Julia NumPy pandas SQL Bash JSON"
)
_C_FAMILY_RE = re.compile(r"(?<![\w+#])C(?:\+\+|#)(?![\w+#])")
_WORDS_RE = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
# CJK has no spaces between words: these are matched anywhere.
_CODE_CJK_RE = re.compile(
    "数组|索引|元素|列表|变量|下标|矩阵|参数|数組|配列|要素|インデックス|リスト|変数|添字|"
    "行列|引数|배열|요소|인덱스|리스트|변수|행렬|인수|매개변수"
)
_CODE_MARKS_RE = re.compile(r"`|==|!=|<=|>=|->|=>|\+=|-=|[ \t]=[ \t]|\w\(\)|[{}]")


def _run_start(text: str, start: int, lo: int) -> int:
    """Where the run of numeric brackets holding the one at `start` begins (``[3][4]``)."""
    r = start
    while r > lo and text[r - 1] == "]":
        k = text.rfind("[", lo, r - 1)
        if k < 0 or _NUMERIC_RE.fullmatch(text, k, r) is None:
            break
        r = k
    return r


def _run_end(text: str, end: int) -> tuple[int, bool]:
    """Where the run of numeric brackets ending at `end` stops; False if more text may extend it."""
    p = end
    while p < len(text) and text[p] == "[":
        m = _NUMERIC_RE.match(text, p)
        if m is None:
            prefix = _NUMERIC_PREFIX_RE.match(text, p)
            return p, not (prefix is not None and prefix.end() == len(text))
        p = m.end()
    return p, True


def _sentence_end(text: str, p: int) -> tuple[int, bool]:
    """The end of the lookahead from `p`: a sentence end, a line break or `LOOKAHEAD` characters.

    Also whether that end is certain in `text` (False when the text ends before it).
    """
    limit = min(len(text), p + LOOKAHEAD)
    for k in range(p, limit):
        ch = text[k]
        if ch in "\n\r":
            return k, True
        if ch in "\u3002\uff01\uff1f":
            return k, True
        if ch in _TERMINALS:
            # A sentence ends at a terminal followed by white space, markers between allowed.
            j, known = _run_end(text, k + 1)
            if j >= len(text) or not known:
                return k, False
            if text[j].isspace():
                return k, True
    return limit, limit == p + LOOKAHEAD


def _sentence_start(text: str, line: int, pos: int) -> int:
    """Where the sentence holding `pos` starts: after the last sentence end on its line."""
    start = line
    for m in _SENTENCE_BREAK_RE.finditer(text, line, pos):
        start = m.end()
    return start


def settled(text: str, start: int, end: int, reading: GluedReading | None) -> bool:
    """Whether more text could change how the glued ``[n]`` at ``start..end`` reads.

    ``reading`` is `glued_reading` of it in ``text``. True when the run of markers is complete
    and the reading did not look past it, or when `text` holds all the rule reads after it
    (the end of the sentence or line). `MarkerStream` waits until then; at the end of the
    answer everything is settled.
    """
    if reading is None:
        return True
    p, known = _run_end(text, end)
    if not known or p >= len(text):
        return False
    if not reading.ahead:
        return True
    # Text to come may end a word or a bracket read so far (``list`` may become ``listen``),
    # either way: the whole sentence is read before the reading stands.
    _, certain = _sentence_end(text, p)
    return certain


def _glued_at(text: str, r: int) -> bool:
    """Whether the run at `r` touches a word, a percentage or a call's closing parenthesis."""
    if r == 0:
        return False
    before = text[r - 1]
    return before.isalnum() or before == "_" or before in "%\u2030)"


def _call_before(text: str, r: int, lo: int) -> bool:
    """Whether ``text[r - 1]`` is the ``)`` of a call (``f(x)``, ``items()``, ``a.b()``)."""
    depth = 0
    for k in range(r - 1, lo - 1, -1):
        ch = text[k]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return k > lo and (text[k - 1].isalnum() or text[k - 1] in "_])")
        elif ch in "\n\r":
            return False
    return False


def _indexed_nearby(
    text: str, name: str, lo: int, hi: int, skip: tuple[int, int], *, any_index: bool
) -> bool:
    """Whether `name` is indexed in ``text[lo:hi]`` (outside `skip`).

    By anything but a citation number; with `any_index`, by anything (a word that is no name
    glued to brackets twice is indexed twice: ``nums[1] … nums[2]``).
    """
    key = name + "["
    k = text.find(key, lo, hi)
    while k >= 0:
        if not skip[0] <= k < skip[1] and not (
            k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_.")
        ):
            # Read no further than `hi`: a stream and the whole text then see the same window.
            bracket = k + len(name)
            if any_index or _NUMERIC_RE.match(text, bracket, hi) is None:
                return True
            if _ZERO_RE.search(text, bracket, min(hi, bracket + 3)):
                return True
        k = text.find(key, k + 1, hi)
    return False


def _code_on_line(text: str, lo: int, hi: int) -> str | None:
    """The programming word or operator found in ``text[lo:hi]``, if any."""
    m = _CODE_MARKS_RE.search(text, lo, hi)
    if m is not None:
        return m.group().strip()
    for w in _WORDS_RE.finditer(text, lo, hi):
        word = w.group()
        low = word.lower()
        if low in _CODE_WORDS or low.startswith(_CODE_STEMS):
            return word
        if word in _CODE_VERBS or word in _LANGUAGES:
            return word
    m = _C_FAMILY_RE.search(text, lo, hi) or _CODE_CJK_RE.search(text, lo, hi)
    return None if m is None else m.group()


def _other_script(text: str, lo: int, hi: int, skip: tuple[int, int]) -> bool:
    """Whether ``text[lo:hi]`` outside `skip` holds letters other than plain ASCII ones."""
    return (
        _ACCENTED_RE.search(text, lo, min(hi, skip[0])) is not None
        or _ACCENTED_RE.search(text, max(lo, skip[1]), hi) is not None
    )


def _between_commas(text: str, sentence: int, start: int, p: int) -> bool:
    """Whether the word at `start` stands alone between commas (``The third, samples[2], …``).

    A word in apposition names a thing rather than closing a claim.
    """
    k = start
    while k > sentence and text[k - 1] in " \t":
        k -= 1
    return k > sentence and text[k - 1] == "," and text[p : p + 1] == ","


def _clause_end_after(text: str, p: int) -> bool:
    """Whether a sentence or clause ends right after the run ending at `p`."""
    if p >= len(text):
        return True
    ch = text[p]
    if ch in "\n\r" or ch in _CJK_CLAUSE_END:
        return True
    if ch not in _CLAUSE_END:
        return False
    nxt = text[p + 1 : p + 2]
    return not nxt or nxt.isspace() or nxt in _CLAUSE_END or nxt in _CJK_CLAUSE_END


def _word(text: str, line: int, r: int) -> tuple[int, bool]:
    """Where the word ending at `r` starts, and whether it is in another script or accented.

    An ASCII name glued to letters of another script (``配列arr``) is read on its own; a Latin
    word with accents (``Köln``, ``café``) is read whole.
    """
    k = r
    while k > line and text[k - 1] in _ASCII_WORD:
        k -= 1
    if k < r:
        if k > line and _latin(text[k - 1]):
            while k > line and (text[k - 1] in _ASCII_WORD or _latin(text[k - 1])):
                k -= 1
            return k, True
        return k, False
    while k > line and (text[k - 1].isalnum() or text[k - 1] == "_") and not text[k - 1].isascii():
        k -= 1
    return k, True


def _expr_start(text: str, lo: int, word_start: int) -> int:
    """Where the expression ending with the word at `word_start` starts (``self.items``).

    Words joined by ``.`` or ``-`` (``GPT-4o``, ``Llama-3.1``), at most eight joins.
    """
    start = word_start
    for _ in range(8):
        k = start - 1
        if k - 1 < lo or text[k] not in ".-" or text[k - 1] not in _ASCII_WORD:
            break
        k -= 1
        while k > lo and text[k - 1] in _ASCII_WORD:
            k -= 1
        start = k
    return start


def _code_shape(core: str) -> str | None:
    """What makes a word look like a name from code (``x``, ``row_2``, ``myList``, ``dp``)."""
    if len(core) == 1 and core.islower():
        return "a one-letter name"
    if "_" in core:
        return "a snake_case name"
    if _LOWER_CAMEL_RE.match(core):
        return "a camelCase name"
    if core.islower() and "-" not in core:
        if any(ch.isdigit() for ch in core):
            return "a lowercase name with digits"
        if not any(ch in _VOWELS for ch in core):
            return "an abbreviated name"
    return None


def _quantity_before(text: str, lo: int, pos: int) -> bool:
    """Whether a quantity ends right before `pos`: a number, then at most two unit words."""
    m = _QUANTITY_RE.search(text, lo, pos)
    return m is not None and not any(w.lower() in _NOT_UNITS for w in (m.group(1) or "").split())


def _latin(ch: str) -> bool:
    """A Latin letter with a diacritic (Latin-1 Supplement to Latin Extended Additional)."""
    return ch.isalpha() and ("\u00c0" <= ch <= "\u024f" or "\u1e00" <= ch <= "\u1eff")


def glued_reading(text: str, start: int) -> GluedReading | None:
    """What the numeric ``[n]`` at `start` reads as when glued to the text before it.

    None when its run of markers (``[3][4]``) touches no word, percentage or call: an
    ordinary marker. The end of `text` counts as the end of the answer (see `settled`).
    """
    lo = max(0, start - LOOKBEHIND)
    r = _run_start(text, start, lo)
    if not _glued_at(text, r):
        return None
    m = _NUMERIC_RE.match(text, r)
    if m is None:
        return None
    p, _ = _run_end(text, m.end())
    # Whether it is glued at all reads only the text before it.
    before = text[r - 1]
    if before == ")" and not _call_before(text, r, lo):
        return None
    if before in "%\u2030" and _PERCENT_RE.search(text, max(lo, r - 3), r) is None:
        return None
    if _ZERO_RE.search(text, r, p):
        return GluedReading("index", "indexed from 0")
    if text.startswith("`", p):
        return GluedReading("index", "inline code closes after it")
    if before == ")":
        return GluedReading("index", "it indexes a call")
    if before in "%\u2030":
        return GluedReading("citation", "a percentage")
    line = max(lo, text.rfind("\n", lo, r) + 1, text.rfind("\r", lo, r) + 1)
    word_start, foreign = _word(text, line, r)
    if word_start == r:
        return None
    word = text[word_start:r]
    expr_start = word_start
    if not foreign:
        expr_start = _expr_start(text, max(line, word_start - _EXPR_SPAN), word_start)
    expr = text[expr_start:r]
    # --- what the expression itself says
    if not foreign:
        if _RANGE_RE.fullmatch(expr) or (word[0].isdigit() and expr == word):
            return GluedReading("citation", "a number")
        if "." in expr and _VERSION_RE.search(expr) is None:
            head = expr.split(".", 1)[0]
            reading: Reading = "unsure" if head[:1].isupper() else "index"
            return GluedReading(reading, f"an attribute ({expr!r})")
        core = (expr if "-" in expr else word).strip("_") or word
        quantity = _quantity_before(text, max(line, expr_start - 64), expr_start)
        shape = None if quantity else _code_shape(core)
        if shape is not None:
            return GluedReading("index", f"{shape} ({core!r})")
    else:
        core, quantity = word, False
    name = not foreign and not quantity and not core.islower()
    # --- the code around it
    if _INDEX_AFTER_RE.match(text, p):
        return GluedReading("index", "code follows it", ahead=True)
    if _INDEX_BEFORE_RE.search(text, max(line, expr_start - 12), expr_start):
        return GluedReading("index", "code precedes it", ahead=True)
    after_end, _ = _sentence_end(text, p)
    sentence = _sentence_start(text, line, expr_start)
    if _indexed_nearby(text, expr, lo, after_end, (expr_start, p), any_index=False):
        return GluedReading("index", f"{expr!r} is indexed nearby", ahead=True)
    plain = not (foreign or quantity or name)
    if plain and _indexed_nearby(text, expr, sentence, after_end, (expr_start, p), any_index=True):
        return GluedReading("index", f"{expr!r} is indexed twice in its sentence", ahead=True)
    # --- a citation signal, weighed against programming in the sentence
    closes = _clause_end_after(text, p)

    def code() -> str | None:
        return _code_on_line(text, sentence, expr_start) or _code_on_line(text, p, after_end)

    if foreign:
        kind = "a word in another script or with accents"
    elif quantity:
        kind = "a quantity"
    elif name and (len(core) > 1 or not core.isalpha()):
        kind = "a name"
    elif name:
        return GluedReading("unsure", f"a one-letter name ({core!r})", ahead=True)
    elif _other_script(text, sentence, after_end, (expr_start, p)):
        return GluedReading("unsure", f"{core!r} in a sentence in another script", ahead=True)
    elif not closes:
        return GluedReading("unsure", f"{core!r} with no clause ending after it", ahead=True)
    elif _between_commas(text, sentence, expr_start, p):
        return GluedReading("unsure", f"{core!r} stands alone between commas", ahead=True)
    elif (found := code()) is not None:
        return GluedReading("unsure", f"{core!r} with {found!r} on the line", ahead=True)
    else:
        return GluedReading("citation", "a word ending a clause", ahead=True)
    if closes or (found := code()) is None:
        return GluedReading("citation", kind, ahead=True)
    return GluedReading("unsure", f"{kind} with {found!r} on the line", ahead=True)
