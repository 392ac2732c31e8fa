"""The tokenizer's shortcut for plain words (`text.plain_words`), which the lexicon takes for its
thousands of phrases at import, gives what the full tokenizer gives wherever it answers."""

from __future__ import annotations

from ledger_tui.engine.conversation import lexicon, text


def every_lexicon_phrase() -> set[str]:
    found: set[str] = set()
    for value in vars(lexicon).values():
        if isinstance(value, tuple) and value and all(isinstance(p, tuple) for p in value):
            found.update(" ".join(p).rstrip("*") for p in value if all(isinstance(w, str) for w in p))
    return found


def test_the_shortcut_agrees_with_the_tokenizer_on_every_phrase_of_the_lexicon():
    phrases = every_lexicon_phrase()
    answered = {p: words for p in phrases if (words := text.plain_words(p)) is not None}
    assert len(phrases) > 1000 and len(answered) > 0.8 * len(phrases)  # it is the common case
    assert {p: text.tokens(p) for p in answered} == answered


def test_what_a_rule_rewrites_goes_to_the_tokenizer():
    for phrase in ("dont cancel", "two bags", "i can't", "my email is a@b.co", "may 5", "3pm", "Yes", "ok  then", " ok"):
        assert text.plain_words(phrase) is None, phrase
    assert text.tokens("dont cancel") != ("dont", "cancel")  # the rules rewrite these two
    assert text.tokens("two bags") == ("2", "bags")
    assert text.plain_words("go ahead") == text.tokens("go ahead") == ("go", "ahead")
