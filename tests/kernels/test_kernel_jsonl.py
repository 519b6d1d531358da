"""The JSON-lines kernel's pieces against Python's own: base64 (six bytes at a time, from
loads of eight) against ``base64.b64encode``, and header keys (eight plain characters at a
time, the rest one by one) against ``json.dumps(..., ensure_ascii=True)``, at every length and
every place a character that must be escaped can fall in a word."""

from __future__ import annotations

import base64
import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_format.runtime.kernels import jsonl


def _out(n: int) -> np.ndarray:
    return np.zeros(n * 6 + 64 + jsonl.SLACK, np.uint8)


@settings(max_examples=400, deadline=None)
@given(data=st.binary(max_size=80), lead=st.integers(0, 9), trail=st.integers(0, 9))
def test_base64_is_pythons(data, lead, trail):
    # The value lies inside a bigger buffer, as in an Arrow column: loads stay within it.
    buffer = np.frombuffer(b"\xff" * lead + data + b"\xfe" * trail, np.uint8)
    out = _out(len(buffer))
    end = jsonl._base64(out, 3, buffer, lead, lead + len(data))
    assert bytes(out[3:end]) == b'"' + base64.b64encode(data) + b'"'


plain = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=40)
awkward = st.text(
    alphabet=st.sampled_from('"\\\n\r\t\b\f\x00\x1f\x7f\x80 ~/aZé€😀\U0010ffff'), max_size=40
)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(plain, awkward, st.text(max_size=40)), lead=st.integers(0, 9))
def test_header_keys_are_escaped_as_json_dumps_escapes_them(text, lead):
    raw = text.encode("utf-8", "surrogatepass")
    buffer = np.frombuffer(b"x" * lead + raw, np.uint8)
    out = _out(len(buffer))
    end = jsonl._string(out, 0, buffer, lead, lead + len(raw))
    assert bytes(out[:end]).decode("ascii") == json.dumps(text)[1:-1]
