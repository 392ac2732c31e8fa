"""The closed reader on the reply tables: how each language's replies to a confirmation card read.

    python -m benchmarks.answer_tables [TABLE.json …]   (default: every tests/data/consent/replies-*.json)

Each table holds replies written by someone who had not seen the reader, to the cards of
`tests/data/consent/cards.json`, each with the answer it should get: yes (a plain yes) or not
(no, unclear). A false yes is a write run without consent; the reader must have none, and must read
at least 90 % of the plain yeses of each language as yes. Prints, per language, the yeses read as
yes, the false yeses, and the not-yeses read as no or unclear as labelled; `-v` lists every miss.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ledger_tui.engine.conversation.answers import CardWords, answer_reading, reply_words

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "tests" / "data" / "consent"
LANGS = ("en", "fr", "es", "de", "it", "pt")


def card_words(card: dict) -> CardWords:
    """A card of cards.json as the session would give it to the reader: its families and values,
    the words of its lines (the text between the opening and the question), and dates without a
    year in the year of its domain's clock, as a session reads them."""
    from ledger_tui.domains import load_domain

    year = int(load_domain(card["domain"]).clock[:4])
    return reply_words(card["families"], card["values"], card["text"].splitlines()[1:-1], year)


@dataclass
class Figures:
    yes: Counter = field(default_factory=Counter)  # lang -> plain yeses
    yes_read: Counter = field(default_factory=Counter)  # lang -> plain yeses read as yes
    false_yes: list = field(default_factory=list)  # rows not yes, read as yes
    missed: list = field(default_factory=list)  # (row, reason) of plain yeses not read as yes
    not_yes: Counter = field(default_factory=Counter)
    as_labelled: Counter = field(default_factory=Counter)  # lang -> not-yeses read as their label

    def recall(self, lang: str) -> float:
        return self.yes_read[lang] / self.yes[lang] if self.yes[lang] else 1.0


def measure(table: Path) -> Figures:
    from ledger_tui.domains import load_domain

    cards = {
        k: (card_words(c), int(load_domain(c["domain"]).clock[:4])) for k, c in json.loads((FOLDER / "cards.json").read_text()).items()
    }
    figures = Figures()
    for row in json.loads(table.read_text(encoding="utf-8"))["replies"]:
        words, year = cards[row["card"]]
        reading = answer_reading(row["reply"], words, year)
        lang = row["lang"]
        if row["expected"] == "yes":
            figures.yes[lang] += 1
            if reading.answer == "yes":
                figures.yes_read[lang] += 1
            else:
                figures.missed.append((row, reading.reason))
        else:
            figures.not_yes[lang] += 1
            if reading.answer == "yes":
                figures.false_yes.append(row)
            elif reading.answer == row["expected"]:
                figures.as_labelled[lang] += 1
    return figures


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    tables = [Path(a) for a in argv if a != "-v"] or sorted(FOLDER.glob("replies-*.json"))
    for table in tables:
        f = measure(table)
        print(f"{table.name}")
        print(f"  {'lang':<5} {'plain yes read as yes':>22} {'false yes':>10} {'not-yes as labelled':>20}")
        for lang in LANGS:
            false = sum(1 for r in f.false_yes if r["lang"] == lang)
            print(
                f"  {lang:<5} {f.yes_read[lang]:>9}/{f.yes[lang]:<3} {100 * f.recall(lang):5.1f} % {false:>10} "
                f"{f.as_labelled[lang]:>12}/{f.not_yes[lang]}"
            )
        total_yes = sum(f.yes.values())
        print(f"  all   {sum(f.yes_read.values()):>9}/{total_yes:<3} {100 * sum(f.yes_read.values()) / max(1, total_yes):5.1f} % {len(f.false_yes):>10}")
        for row in f.false_yes:
            print(f"  FALSE YES {row['lang']} {row['card']} {row['reply']!r} ({row['kind']})")
        if verbose:
            for row, reason in f.missed:
                print(f"  missed {row['lang']} {row['card']} {row['reply']!r}: {reason}")


if __name__ == "__main__":
    main(sys.argv[1:])
