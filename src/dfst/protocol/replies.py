"""A reply: one JSON line `{"id": 7, "answer": "1032"}` (from a command or an answers file).

`answer` is the answer string, or null for a model that has none (scored as wrong). Anything else
is not a reply, and a one-line DfstError says where and shows the start of the line. The line is
parsed by dfst.io.inputs.parse_json, the reader of every user's JSON: a reply nested thousands of
levels deep, not UTF-8 or holding NaN is refused there like a file would be, not by a RecursionError.
"""

from __future__ import annotations

import json

from dfst.errors import DfstError
from dfst.io.inputs import InvalidJson, parse_json

SHOWN = 60  # characters of a bad line quoted in the message


def parse_reply(line: bytes, where: str) -> tuple[int, str | None]:
    """(id, answer) of one reply line; a DfstError naming `where` otherwise."""
    try:
        reply = parse_json(line, "the line")
    except InvalidJson as exc:
        raise DfstError(f"{where} is not a JSON reply {{\"id\": ..., \"answer\": \"...\"}} ({exc}): "
                        f"{_show(line)}") from None
    if not isinstance(reply, dict) or "id" not in reply or "answer" not in reply:
        raise DfstError(f"{where} is not a reply: it needs \"id\" and \"answer\": {_show(line)}")
    request_id, answer = reply["id"], reply["answer"]
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        raise DfstError(f"{where}: \"id\" is {_show_value(request_id)}, not an integer")
    if answer is not None and not isinstance(answer, str):
        raise DfstError(f"{where}: the answer to id {request_id} is {_show_value(answer)}, "
                        "not a string (give the digits as a string: \"1032\")")
    return request_id, answer


def _show(line: bytes) -> str:
    text = line.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= SHOWN else text[:SHOWN] + "...")


def _show_value(value: object) -> str:
    """The start of a parsed value (parse_json bounded its depth, so json.dumps cannot recurse far)."""
    return _show(json.dumps(value).encode())
