"""Reading the conversation: what the customer said, asked and answered.

The closed readers of cards (`answers`) and questions (`questions`), the free-text reader the gate
uses for transcripts the system did not conduct (`consent`, `stated`, `speaker`), and the words
and tokens they share (`lexicon`, `text`).
"""
