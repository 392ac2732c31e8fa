"""A domain's policy text, quoted by clause: `clause_text` finds the paragraph a predicate names.

Apart from `engine.domain` (which imports it back for the domains) because `why` quotes the policy
of every failed check and needs nothing else of a domain: importing `engine.domain` builds the
conversation readers and questions on the way (17 ms of `why`'s start-up).
"""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=512)
def clause_text(policy: str, clause: str) -> str:
    """The policy paragraph tagged `[clause]` in policy.md (the tag starts a bullet or paragraph).
    Kept once found: `why` asks it of the same few clauses for each of thousands of decisions."""
    tag = f"[{clause}]"
    lines = policy.splitlines()
    for i, line in enumerate(lines):
        if tag in line:
            out = [line.strip()]
            for nxt in lines[i + 1 :]:
                s = nxt.strip()
                if not s or s.startswith(("-", "*", "#")) or re.match(r"^\d+\.", s) or "[" in s[:3]:
                    break
                out.append(s)
            return " ".join(out).replace(f"**{tag}**", tag).lstrip("-* ")
    return ""
