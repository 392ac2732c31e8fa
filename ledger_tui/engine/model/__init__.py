"""The model client: one small async protocol over OpenAI-compatible servers and offline models.

`models` (the protocol, the real client, the scripted ones), `transport` (its HTTP), `prompt` (what
the model sees), `context` and `tokens` (keeping it inside the window), `probe` (is the server there).
"""
