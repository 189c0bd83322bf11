"""An origin's goals as one text (a snapshot kept with the origin's rows): a new process reads it instead of the
rows, and parses only what it touches (:class:`.held.OriginGoals` reads each goal's line when ranking meets it).

A snapshot is a checksum line, a JSON header (the format, the matcher's signature version, the structure's
numbers), three lines of keys (ids, shapes, forms), the goals' texts, and one line per goal. One cut short or
changed in any part, of another format or written by another version of the matcher is not read: the origin is read
from its rows. Earlier formats lack what this one indexes (format 6 a text's token, ``wordings.text_token_of``; formats
4 and 5 each form's number of shapes too).
"""

from __future__ import annotations

import json
import zlib
from datetime import datetime

from .form_shapes import FormShapes
from .held import OriginGoals
from .key_lines import SEPARATOR, json_line, key_line, read_key_line
from .positions import NumberedLists, NumberRow, PositionLists
from .recall import SIGNATURE_VERSION

SNAPSHOT_FORMAT = 7


def pack(held: OriginGoals) -> str:
    """An origin's goals as text (without vectors): lines of JSON and three lines of keys as they are
    (ids, shapes, forms), so that a reader parses only the index up front (the ids and shapes when it adds
    a goal, each goal's line when ranking touches it)."""
    header = {"format": SNAPSHOT_FORMAT, "signature": SIGNATURE_VERSION, "version": held.version,
              "removals": held.removals, "shape_count": held.shape_count, "form_shapes": held.form_shapes.counts,
              "templates": held.templates, "members": held.members.packed(),
              "template_of": held.template_row.packed(), "form_of": held.form_row.packed(),
              "form_members": held.form_members.packed(), "fixed": held.fixed.packed(),
              "fixed_sizes": held.fixed_sizes, "unfixed": held.unfixed, "late": held.late,
              "last_created": held.last_created.isoformat() if held.last_created else None,
              "postings": held.postings.packed(), "spread": held.spread, "valued": held.valued.packed()}
    keys = [key_line(SEPARATOR.join(keys)) for keys in (sorted(held.ids), sorted(held.shapes), held.forms)]
    rest = "\n".join([*keys, json_line(held.texts.packed()),
                      *(record if isinstance(record, str) else json_line(record) for record in held.records)])
    body = json_line(header) + "\n" + rest
    return checksum(body) + "\n" + body  # a snapshot cut short or changed in any part is not read


def checksum(text: str) -> str:
    """The CRC-32 of a snapshot's body, as the first line of the snapshot."""
    return f"{zlib.crc32(text.encode('utf-8', 'surrogatepass')):08x}"


def unpack(text: str | None) -> OriginGoals | None:
    """The structure a snapshot holds, or None when there is none, it is unreadable, or it was written
    by another version of the matcher (then the origin is read from its rows)."""
    if not text:
        return None
    check, _, body = text.partition("\n")
    if check != checksum(body):
        return None
    header_text, _, rest = body.partition("\n")
    try:
        data = json.loads(header_text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("signature") != SIGNATURE_VERSION \
            or data.get("format") != SNAPSHOT_FORMAT:
        return None
    lines = rest.split("\n")
    if len(lines) < 4 or not lines[3].startswith("{") or not all(
            line.endswith('"') for line in lines[:3] if line.startswith('"')):  # a line of keys in JSON is whole
        return None
    try:
        return OriginGoals(
            version=data["version"], removals=data["removals"], records=lines[4:],
            ids_text=read_key_line(lines[0]), shapes_text=read_key_line(lines[1]),
            forms_text=read_key_line(lines[2]), texts_text=lines[3],
            form_row=NumberRow(data["form_of"]), form_members=NumberedLists(data["form_members"]),
            shape_count=data["shape_count"], form_shapes=FormShapes(data["form_shapes"]),
            postings=PositionLists(data["postings"]), templates=data["templates"],
            members=NumberedLists(data["members"]), template_row=NumberRow(data["template_of"]), fixed=PositionLists(data["fixed"]),
            fixed_sizes=data["fixed_sizes"], unfixed=data["unfixed"], late=data["late"],
            last_created=datetime.fromisoformat(data["last_created"]) if data["last_created"] else None,
            spread=data["spread"], valued=PositionLists(data["valued"]), _all_masks=False,
        )
    except (KeyError, TypeError, ValueError):
        return None
