"""Before a live session opens: is the model server there, and does it take the key?

`play` asks `GET <base-url>/models` once, with a short limit, so a wrong URL or key is one
sentence before the operator types anything (otherwise it surfaces after the first message, after
a long spinner). Only what the answer proves is reported: a server without that route (404, 405,
any other status) is not an error; the chat call will say more if something is wrong.
"""

from __future__ import annotations

from urllib.parse import urlparse

from ledger_tui.engine.outside import printable

OPENAI = "https://api.openai.com/v1"
LIMIT = 5.0


def check_endpoint(base_url: str | None, api_key: str | None, limit: float = LIMIT) -> str | None:
    """None if the server answered; otherwise one sentence naming what to fix."""
    import openai

    root = (base_url or OPENAI).rstrip("/")
    flags = "--base-url (or OPENAI_BASE_URL)"
    if urlparse(root).scheme not in ("http", "https") or not urlparse(root).netloc:
        return f"{flags} {printable(root)!r} is not an http(s) URL; give one like http://127.0.0.1:8080/v1."
    try:
        client = openai.OpenAI(base_url=root, api_key=api_key or "not-needed", timeout=limit, max_retries=0)
        with client:
            client.models.with_raw_response.list()
    except openai.APITimeoutError:
        return f"The model server at {printable(root)} did not answer within {limit:g} s; check {flags}, or play with --no-model."
    except openai.APIConnectionError as exc:
        return f"Cannot reach the model server at {printable(root)} ({_reason(exc)}); check {flags}, or play with --no-model."
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return f"The model server at {printable(root)} refused the API key (HTTP {exc.status_code}); set a valid --api-key (or OPENAI_API_KEY)."
    except openai.APIStatusError:
        return None  # a server without the route (404, 405, …): the chat call will tell more
    except (openai.OpenAIError, ValueError) as exc:  # a URL the client cannot use
        return f"{flags} {printable(root)!r} cannot be used ({_reason(exc)}); give one like http://127.0.0.1:8080/v1."
    return None


def _reason(exc: BaseException) -> str:
    """The innermost cause's words: "Connection refused", not "Connection error."."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    while exc.__cause__ is not None:
        exc = exc.__cause__
        text = " ".join(str(exc).split()) or text
    return printable(text, 120)
