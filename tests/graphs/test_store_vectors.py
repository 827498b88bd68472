"""Vector parameters (store/vectors.py): a vector a write stores with vecf32 is sent with 9 significant digits and
FalkorDB stores the very float32 the full repr gave it (issue 29 §5)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from exograph.core.errors import ValidationError
from exograph.graphs import store
from exograph.graphs.store.core import _header
from exograph.graphs.store.vectors import vector32


def _bits(values: list[float]) -> list[int]:
    return [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]


def _tricky() -> list[float]:
    """Float32 values of every scale, and doubles that are not float32 (one just above the midpoint of two float32s:
    it rounds up, where a 9-digit decimal of it read as a float32 could round down)."""
    rng = np.random.default_rng(29)
    values = (rng.standard_normal(48) / 20).astype(np.float32).tolist()
    values += [1e-40, -3.5e-39, 1.17549435e-38, 2.5e-12, -7.25e-5, 0.999999940, 3.0e38, 0.1, 1 / 3, -2 / 3]
    low = float(np.float32(0.3))
    high = float(np.nextafter(np.float32(0.3), np.float32(1)))
    values.append(math.nextafter((low + high) / 2, 1.0))
    return values


def test_a_write_vector_is_sent_with_nine_significant_digits() -> None:
    values = _tricky()
    header = _header(store.params(rows=[{"embedding": vector32(values)}]))
    rounded = np.asarray(values, dtype=np.float32).tolist()
    assert header == "CYPHER `rows`=[{`embedding`:[" + ",".join(f"{v:.9g}" for v in rounded) + "]}] "
    assert len(header) < len(_header(store.params(rows=[{"embedding": rounded}]))) * 0.8
    # A plain list of floats is written as before, each float's repr (not only vectors are lists of floats).
    assert _header(store.params(weights=[0.1, 1 / 3])) == f"CYPHER `weights`=[{0.1!r},{1 / 3!r}] "


@pytest.mark.parametrize("bad", [[0.5, math.nan], [1e39], [], ["x"], [[0.1]]])
def test_a_write_vector_must_hold_finite_float32_values(bad: list[float]) -> None:
    with pytest.raises(ValidationError):
        vector32(bad)


@pytest.mark.parametrize("extra", [[], [0.0, -0.0, 1.0, -1.0]])
def test_falkordb_stores_the_float32_of_each_value(db, extra: list[float]) -> None:  # type: ignore[no-untyped-def]
    """Read back, the stored vector is the float32 of each value, bit for bit: as when the full repr was sent.
    Whole numbers and -0.0 (which '%.9g' would write as integer literals) are sent by their repr."""
    values = _tricky() + extra
    name = "exo:test_store_vectors"
    try:
        store.store_ensure(name, dimension=len(values))
        store.query(name, "CREATE (:ChunkVector {key: 'k', embedding: vecf32($v)})", {"v": vector32(values)})
        ((stored,),) = store.ro_query(name, "MATCH (v:ChunkVector {key: 'k'}) RETURN v.embedding")
    finally:
        store.store_drop(name)
    assert _bits([float(x) for x in stored]) == _bits(np.asarray(values, dtype=np.float32).tolist())
