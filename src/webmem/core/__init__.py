"""The shared kernel every room builds on; it imports nothing else of webmem.

- ``models``: the records (pydantic) and the checks at the API's boundary;
- ``errors``: the one error hierarchy;
- ``events``: what components report, sent to the callback and ``events.jsonl``;
- ``redaction``: secrets become placeholders before anything is stored or shown;
- ``urls``, ``text``, ``clock``: URL and domain checks, prompt-safe text, UTC time and ids;
- ``tokens`` and ``pack``: token counts, and fitting ranked parts into a token budget;
- ``terms``: recall's word handling (stems, stop words, contrasts);
- ``elements``: an element's identity (the signals a person knows it by) and how two identities compare;
- ``version``: webmem's version;
- ``lazy``: a package's public names loaded on first use;
- ``processes``: which process holds a run, checked by another process of the machine.
"""
