"""Vector parameters of store queries: how a list of floats is written into the `CYPHER name=value` header.

FalkorDB takes parameters only as text, and a document's write carries its vectors as float literals that the
server parses back (in ingest, the text of 2Wiki's entity and chunk vectors was most of what a write sends).
A plain list of finite floats (`Floats`) is written as falkordb's client writes it, each float's repr. A vector
FalkorDB keeps as float32 (`vecf32(...)` of a write) is a `Vector32`: rounded to float32 here and written with 9
significant digits, which read back (strtod, then a cast to float, as vecf32 does) give the very float32 it
stores from the full repr: checked for every positive finite float32, subnormals included (2,139,095,039 values,
'%.9g' against glibc's strtod; issue 29 §5), and the sign is symmetric. 36% fewer characters, written 2.5x faster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from exograph.core.errors import ValidationError


class Floats(list):  # type: ignore[type-arg]
    """A parameter list of finite floats (an embedding): checked once and written by `_header` at C speed."""


class Vector32(Floats):
    """A vector a write stores with vecf32: float32 values (as Python floats), written with 9 significant digits."""


def floats(value: list[object] | tuple[object, ...]) -> Floats | None:
    """The list as Floats when every item is a float and all are finite (else None: checked item by item)."""
    if not value or not all(type(item) is float for item in value):
        return None
    try:
        total = math.fsum(value)  # type: ignore[arg-type]
    except OverflowError:
        return None
    return Floats(value) if math.isfinite(total) else None


def vector32(values: Sequence[float]) -> Vector32:
    """values rounded to float32, as vecf32 stores them; ValidationError unless each is a finite float32."""
    try:
        with np.errstate(over="ignore"):  # a value past float32's range is refused below, as inf
            rounded = np.asarray(values, dtype=np.float64).astype(np.float32)
    except (TypeError, ValueError):
        rounded = np.zeros(0, dtype=np.float32)
    if rounded.ndim != 1 or not rounded.size or not np.isfinite(rounded).all():
        raise ValidationError(
            "A vector is empty or holds a value that is not a finite float32.", code="invalid_parameter"
        )
    return Vector32(rounded.tolist())


def vector_text(value: Floats) -> str:
    """The list's literal: a Vector32's items with 9 significant digits (a whole number, which '%.9g' writes as an
    integer literal, and -0.0 keep their repr), any other Floats' by their repr."""
    if type(value) is Vector32 and not (0.0 in value or 1.0 in value or -1.0 in value):
        return "[" + ",".join(map("%.9g".__mod__, value)) + "]"
    return "[" + ",".join(map(repr, value)) + "]"
