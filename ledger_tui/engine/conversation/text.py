"""Text as the gate compares it: whole tokens, normalized, never substrings.

The gate decides whether an agent *named* a value (a reservation id, a card's last four digits, an
amount, a date) by looking for the value's tokens as a contiguous run in the message's tokens. Both
sides go through the same normalization:

- case, accents and punctuation are dropped; `#W2378156` is `w2378156`;
- numbers lose thousands separators and trailing zeros: `$1,628.00` is `1628`, `2.0` is `2`,
  `2,5` (a decimal comma) is `2.5`; a number glued to a unit splits (`2GB` is `2 gb`);
- dates in words become ISO dates in the domain's year: `May 16`, `16 mai`, `16 de mayo`,
  `16. Mai`, `May 16th, 2024` are all `2024-05-16`; times become 24-hour `hh:mm`;
- English contractions open up (`don't` is `do not`) and elisions split (`l'annulation`).

So `ZFA04YX` never names `ZFA04Y`, and `$1000` never names `100`.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Sequence

MONTHS = {
    # en, fr, es, de, it, pt (accent-free, lower case); abbreviations of three letters or more
    1: ("january", "jan", "janvier", "janv", "enero", "ene", "januar", "jaenner", "gennaio", "gen", "janeiro"),
    2: ("february", "feb", "fevrier", "fev", "febrero", "februar", "febbraio", "fevereiro"),
    3: ("march", "mar", "mars", "marzo", "marz", "maerz", "marco"),
    4: ("april", "apr", "avril", "avr", "abril", "abr", "aprile"),
    5: ("may", "mai", "mayo", "maggio", "mag", "maio"),
    6: ("june", "jun", "juin", "junio", "juni", "giugno", "giu", "junho"),
    7: ("july", "jul", "juillet", "juil", "julio", "juli", "luglio", "lug", "julho"),
    8: ("august", "aug", "aout", "agosto", "ago"),
    9: ("september", "sep", "sept", "septembre", "septiembre", "settembre", "set", "setembro"),
    10: ("october", "oct", "octobre", "octubre", "oktober", "okt", "ottobre", "ott", "outubro", "out"),
    11: ("november", "nov", "novembre", "noviembre", "novembro"),
    12: ("december", "dec", "decembre", "diciembre", "dic", "dezember", "dez", "dicembre", "dezembro"),
}
_MONTH_OF = {name: number for number, names in MONTHS.items() for name in names}
# Words that are month names in one language and common words in another are dates only next to
# a day number (the regex below demands one).
_MONTH_WORD = "|".join(sorted(_MONTH_OF, key=len, reverse=True))

_DAY = r"(?P<{n}>[0-3]?\d)(?:st|nd|rd|th|er|e|o|º|\.)?"
_YEAR = r"(?:,?\s*(?P<{n}>(?:19|20)\d\d))?"
_DATE_WORDS = re.compile(
    r"\b(?:"
    + r"(?P<m1>" + _MONTH_WORD + r")\.?\s+(?:the\s+)?" + _DAY.format(n="d1") + r"\b" + _YEAR.format(n="y1")
    + r"|" + _DAY.format(n="d2") + r"\s+(?:of\s+|de\s+|del\s+)?(?P<m2>" + _MONTH_WORD + r")\b\.?" + r"(?:,?\s*(?:de\s+|del\s+)?(?P<y2>(?:19|20)\d\d))?"
    + r")",
    re.I,
)  # fmt: skip
_ISO_DATE = re.compile(r"\b(?P<y>(?:19|20)\d\d)[-/.](?P<m>[01]?\d)[-/.](?P<d>[0-3]?\d)(?:[T ](?P<t>\d\d:\d\d)(?::\d\d)?)?\b")
_TIME = re.compile(r"\b(?P<h>[012]?\d)(?::(?P<mi>[0-5]\d))?\s*(?P<ap>[ap])\.?\s?m\b\.?|\b(?P<h2>[012]?\d)[:h](?P<mi2>[0-5]\d)\b", re.I)
_PHONE = re.compile(r"(?<![\w-])\+?1?[\s.-]?\(?(?P<a>\d{3})\)?[\s.-]?(?P<b>\d{3})[\s.-]?(?P<c>\d{4})(?![\w-])")
# (an address starts where a run of its characters starts: without the look-behind, every position
# inside a long run of letters would scan to the run's end looking for the `@`, quadratic)
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NUMBER = re.compile(r"(?<![\w.,])(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)(?![\d])")
_CONTRACTIONS = (
    (re.compile(r"\bcan['’]t\b", re.I), "can not"),
    (re.compile(r"\bwon['’]t\b", re.I), "will not"),
    (re.compile(r"\bain['’]t\b", re.I), "is not"),
    (re.compile(r"n['’]t\b", re.I), " not"),
    (re.compile(r"\b(dont|doesnt|didnt|isnt|wasnt|arent|werent|havent|hasnt|shouldnt|wouldnt|couldnt)\b", re.I), None),
    (re.compile(r"\b(that|it|there|what|here|who|where|how|this)['’]s\b", re.I), r"\1 is"),
    (re.compile(r"\bi['’]m\b", re.I), "i am"),
    (re.compile(r"\b(you|we|they)['’]re\b", re.I), r"\1 are"),
    (re.compile(r"\b(i|you|we|they|he|she|it)['’]ll\b", re.I), r"\1 will"),
    (re.compile(r"\b(i|you|we|they)['’]ve\b", re.I), r"\1 have"),
    (re.compile(r"\b(i|you|we|they|he|she)['’]d\b", re.I), r"\1 would"),
)
# a word is a run of these, without the punctuation at either end (`.-+@`); matched as whole runs,
# which is linear (a pattern that must end in a letter backtracks over a run of dots once per dot)
_WORD = re.compile(r"[a-z0-9_@.+-]+")
_UNIT_SPLIT = re.compile(r"^(\d+(?:\.\d+)?)([a-z]+)$")
# Values found by the patterns (an address, a date, a number) wait in the text as placeholders:
# U+E000 and two characters of the private-use area after it (6,399² of them, more than a message
# under `limits.MAX_TEXT` can hold)
_STASH_BASE = 0xF8FF - 0xE001 + 1
_PLACEHOLDER = re.compile("(\ue000..)")


def fold_accents(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _number(raw: str) -> str:
    """`1,628.00` -> `1628`, `2,5` -> `2.5`, `07` -> `7`, `2.0` -> `2`."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", raw):
        raw = raw.replace(",", "")
    elif "," in raw:
        raw = raw.replace(",", ".")
    try:
        value = float(raw)
    except ValueError:
        return raw
    if value != value or value in (float("inf"), float("-inf")):
        return raw
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text or "0"


def number_token(value: Any) -> str:
    """How a number in a tool argument or record reads as a token."""
    return _number(str(value))


_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "un": 1, "une": 1, "deux": 2, "trois": 3,
    "quatre": 4, "cinq": 5, "uno": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "eins": 1,
    "zwei": 2, "drei": 3, "vier": 4, "funf": 5, "fuenf": 5, "due": 2, "quattro": 4, "um": 1, "uma": 1,
    "dois": 2, "duas": 2, "quatro": 4,
}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b(?=\s+(?:(?:more|extra|additional|checked|new)\s+){0,2}(?:bag|bags|suitcases?|gb|gigabytes?|passengers?|items?|nights?|valises?|maletas?|koffer|valigie|malas)\b)", re.I)


def _open_contractions(text: str) -> str:
    for rx, repl in _CONTRACTIONS:
        if repl is None:
            text = rx.sub(lambda m: m.group(1)[:-1].lower() + " not", text)
        else:
            text = rx.sub(repl, text)
    return text


def _dates(text: str, year: int, stash) -> str:
    def iso(y: int | None, m: int, d: str) -> str:
        return stash(f"{y or year:04}-{m:02d}-{int(d):02d}") if 1 <= int(d) <= 31 else f" {d} "

    def words(match: re.Match[str]) -> str:
        g = match.groupdict()
        month = _MONTH_OF[(g["m1"] or g["m2"]).lower().rstrip(".")]
        y = g["y1"] or g["y2"]
        return iso(int(y) if y else None, month, g["d1"] or g["d2"])

    def numeric(match: re.Match[str]) -> str:
        m = int(match["m"])
        if not 1 <= m <= 12:
            return match.group(0)
        return iso(int(match["y"]), m, match["d"]) + (stash(match["t"]) if match["t"] else "")

    text = _ISO_DATE.sub(numeric, text)
    return _DATE_WORDS.sub(words, text)


def _times(text: str, stash) -> str:
    def repl(match: re.Match[str]) -> str:
        if match["h2"] is not None:
            return stash(f"{int(match['h2']):02d}:{match['mi2']}")
        hour = int(match["h"]) % 12 + (12 if match["ap"].lower() == "p" else 0)
        return stash(f"{hour:02d}:{match['mi'] or '00'}")

    return _TIME.sub(repl, text)


@lru_cache(maxsize=4096)
def _tokens(text: str, year: int) -> tuple[str, ...]:
    text = fold_accents(text).replace("’", "'").replace("‘", "'")
    text = _open_contractions(text)
    text = _NUMBER_WORD.sub(lambda m: str(_NUMBER_WORDS[m.group(1).lower()]), text)
    kept: list[str] = []

    def stash(token: str) -> str:  # a placeholder: U+E000 and the index in two private-use digits
        kept.append(token)
        high, low = divmod(len(kept) - 1, _STASH_BASE)
        return f" \ue000{chr(0xE001 + high)}{chr(0xE001 + low)} "

    text = EMAIL.sub(lambda m: stash(m.group(0).lower()), text)
    text = _dates(text, year, stash)
    text = _times(text, stash)
    text = _PHONE.sub(lambda m: stash(f"{m['a']}{m['b']}{m['c']}"), text)
    text = _NUMBER.sub(lambda m: stash(_number(m["n"])), text)
    text = text.lower().replace("'", " ").replace("#", " ")
    out: list[str] = []
    for raw in re.split(r"[^\w\ue000-\uf8ff@.+-]+", text):
        for piece in _PLACEHOLDER.split(raw):
            if not piece:
                continue
            if piece.startswith("\ue000"):
                out.append(kept[(ord(piece[1]) - 0xE001) * _STASH_BASE + ord(piece[2]) - 0xE001])
                continue
            for word in _WORD.findall(piece):
                word = word.strip(".-+@")
                if not word:
                    continue
                unit = _UNIT_SPLIT.match(word)
                out.extend((_number(unit[1]), unit[2]) if unit else (word,))
    return tuple(out)


# Text of lower-case ASCII words and single spaces that no rule of `_tokens` rewrites: every rule
# but two needs a digit, an apostrophe or an `@`; the two others are the contractions written
# without an apostrophe and the number words before a noun of quantity.
_PLAIN = re.compile(r"[a-z]+(?: [a-z]+)*")
_REWRITTEN = frozenset(
    "dont doesnt didnt isnt wasnt arent werent havent hasnt shouldnt wouldnt couldnt".split()
) | frozenset(_NUMBER_WORDS)


def plain_words(text: str) -> tuple[str, ...] | None:
    """The tokens of `text` without running the rules, when it is plain words they leave alone
    (the lexicon's thousands of phrases, tokenized at import); None when `tokens` must read it.
    `tests/engine/test_text.py` checks that both agree on every phrase of the lexicon."""
    if not _PLAIN.fullmatch(text):
        return None
    words = tuple(text.split(" "))
    return None if _REWRITTEN.intersection(words) else words


def tokens(text: str, year: int = 2024) -> tuple[str, ...]:
    """The normalized tokens of `text` (dates without a year take `year`)."""
    return _tokens(text or "", year)


def value_tokens(value: Any, year: int = 2024) -> tuple[str, ...]:
    """The tokens a value must show up as: numbers as numbers, strings like text."""
    if isinstance(value, bool):
        return ("yes",) if value else ("no",)
    if isinstance(value, (int, float)):
        return (number_token(value),)
    return tokens(str(value), year)


def contains(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    """Is `needle` a contiguous run of whole tokens in `haystack`?"""
    return find(haystack, needle) >= 0


def find(haystack: Sequence[str], needle: Sequence[str], start: int = 0) -> int:
    """Where `needle` first starts in `haystack` at or after `start`, as a run of whole tokens; -1."""
    n = len(needle)
    if n == 0:
        return -1
    if n > 8:  # (a long needle: a scan whose worst case is linear, see `_matches`)
        return next(_matches(haystack, needle, start), -1)
    first = needle[0]
    for i in range(start, len(haystack) - n + 1):
        if haystack[i] == first and tuple(haystack[i : i + n]) == tuple(needle):
            return i
    return -1


def positions(haystack: Sequence[str], needle: Sequence[str]) -> list[int]:
    """Every start of `needle` in `haystack` (overlapping ones too)."""
    if len(needle) > 8:
        return list(_matches(haystack, needle, 0))
    out, i = [], find(haystack, needle)
    while i >= 0:
        out.append(i)
        i = find(haystack, needle, i + 1)
    return out


def _matches(haystack: Sequence[str], needle: Sequence[str], start: int):
    """The starts of `needle` in `haystack` from `start`, by Knuth-Morris-Pratt: one pass, however
    often the needle's own beginning repeats in it (a slice compare at each start would cost the
    needle's length each time: quadratic on "1 1 1 …" against a long run of ones)."""
    n = len(needle)
    fail = [0] * n
    k = 0
    for i in range(1, n):
        while k and needle[i] != needle[k]:
            k = fail[k - 1]
        if needle[i] == needle[k]:
            k += 1
        fail[i] = k
    k = 0
    for i in range(start, len(haystack)):
        tok = haystack[i]
        while k and tok != needle[k]:
            k = fail[k - 1]
        if tok == needle[k]:
            k += 1
            if k == n:
                yield i - n + 1
                k = fail[k - 1]


def names(text: str, value: Any, year: int = 2024) -> bool:
    """Does `text` name `value`, as whole tokens after normalization?"""
    needle = value_tokens(value, year)
    return bool(needle) and contains(tokens(text, year), needle)


_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n+|(?<=[.!?])(?=[A-ZÀ-Ý¿¡])")


def sentences(text: str) -> list[str]:
    """The message split into sentences (also at line breaks and list items)."""
    return [s.strip() for s in _SENTENCE.split(text or "") if s and s.strip()]
