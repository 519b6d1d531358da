"""``dump -f`` / ``-J`` / ``-s`` / ``-Z``: kcat's consumer output, offline.

Oracle: the records this module writes (with the project's writer), and what kcat prints for
them as read from kcat's sources (github.com/edenhill/kcat): ``format.c`` (``fmt_parse`` /
``fmt_add`` for the format string and its escapes, ``fmt_msg_output_str`` for each token,
``print_headers`` for %h, ``unpack`` / ``pack_check`` for ``-s``), ``json.c``
(``fmt_msg_output_json`` for ``-J``), ``kcat.c`` (``main``: ``-s`` parsing, ``-Z``, the default
format ``%s\\n``). Each expectation is built here from the written messages by those rules,
never from this project's output.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_format.runtime.cli import main
from kafka_format.runtime.write.writer import Message, PartitionWriter, Producer

T0 = 1_700_000_000_000

#: orders-0, one batch each: (magic, messages). Offsets follow from 0.
ORDERS_0: list[tuple[int, list[Message]]] = [
    (
        2,
        [
            Message(b"k1", b"v1", [("h", b"x"), ("n", None), ("e", b"")], T0),
            Message(None, None, (), T0 + 1),  # a tombstone without a key
            Message(b"", b"", (), T0 + 2),  # empty, not null
            Message(b"\xff\x00k", b'a"b\\c\n\x01\x1f\x7f\xc3\xa9\xfe', [("bin", b"\xfe")], T0 + 3),
            Message(b"plain", b"text value", (), T0 + 4),
        ],
    ),
    (0, [Message(b"m0", b"magic zero")]),  # no timestamp at all
    (1, [Message(b"m1", b"magic one", (), T0 + 6)]),
    (2, [Message(b"last", b"end", [("trace", b"t-1")], T0 + 7)]),
]

#: orders-1: integers packed big-endian (kcat's default), one value too short.
COUNTERS = [(i, i * 1_000_003 - 5) for i in range(-2, 4)]


def _orders_0() -> list[tuple[int, int, Message]]:
    """(offset, magic, message) of orders-0."""
    out = []
    for magic, messages in ORDERS_0:
        for m in messages:
            out.append((len(out), magic, m))
    return out


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kcat") / "logs"
    w = PartitionWriter(root, "orders", 0)
    for magic, messages in ORDERS_0:
        w.append(messages, magic=magic)
    w.close()
    w = PartitionWriter(root, "orders", 1)
    w.append([Message(struct.pack(">i", k), struct.pack(">q", v), (), T0) for k, v in COUNTERS])
    w.append([Message(b"\x00\x00\x00\x07", b"\x01\x02\x03", (), T0)])  # offset 6: too short
    w.close()
    # clicks-0: a committed and an aborted transaction, then plain records
    w = PartitionWriter(root, "clicks", 0)
    a, b = Producer(1000, 0), Producer(2000, 0)
    committed = [Message(b"c", b"committed-%d" % i, (), T0) for i in range(2)]
    aborted = [Message(b"c", b"aborted-%d" % i, (), T0) for i in range(2)]
    w.append(committed, producer=a, transactional=True)  # offsets 0, 1
    w.append(aborted, producer=b, transactional=True)  # offsets 2, 3
    w.commit(a)  # offset 4
    w.abort(b)  # offset 5
    w.append([Message(b"c", b"after", (), T0)])  # offset 6
    w.close()
    return root


def dump(capsysbinary, *args) -> tuple[int, bytes, str]:
    try:
        status = main(["dump", "-q", *map(str, args)])
    except SystemExit as exc:  # argparse's own refusals
        status = exc.code
    out, err = capsysbinary.readouterr()
    err_text = err.decode("utf-8", "replace")
    assert "Traceback" not in err_text
    return status, out, err_text


# --- -f, token by token (format.c fmt_msg_output_str) --------------------------------------------


def _kcat_data(data: bytes | None, null: bytes = b"") -> bytes:
    # KC_FMT_KEY / KC_FMT_PAYLOAD test the length: null and empty print nothing (or -Z's NULL)
    return data if data else null


def _kcat_len(data: bytes | None) -> bytes:
    # KC_FMT_KEY_LEN / KC_FMT_PAYLOAD_LEN: -1 for a null pointer, else the length (0 too)
    return b"-1" if data is None else str(len(data)).encode()


def _kcat_ts(magic: int, m: Message) -> bytes:
    # rd_kafka_message_timestamp: -1 where the message has none (magic 0)
    return b"-1" if magic == 0 else str(m.timestamp).encode()


def _kcat_headers(m: Message) -> bytes:
    # print_headers: name=value joined by ",", NULL for a null value, nothing for empty
    return b",".join(
        name.encode() + b"=" + (b"NULL" if value is None else value) for name, value in m.headers
    )


TOKENS = {
    "%s": lambda o, magic, m: _kcat_data(m.value),
    "%S": lambda o, magic, m: _kcat_len(m.value),
    "%k": lambda o, magic, m: _kcat_data(m.key),
    "%K": lambda o, magic, m: _kcat_len(m.key),
    "%t": lambda o, magic, m: b"orders",
    "%p": lambda o, magic, m: b"0",
    "%o": lambda o, magic, m: str(o).encode(),
    "%T": lambda o, magic, m: _kcat_ts(magic, m),
    "%h": lambda o, magic, m: _kcat_headers(m),
    "%%": lambda o, magic, m: b"%",
}


@pytest.mark.parametrize("token", sorted(TOKENS))
def test_each_token(capsysbinary, log_dir, token):
    status, out, err = dump(capsysbinary, "-f", f"<{token}>\\n", log_dir / "orders-0")
    want = b"".join(b"<" + TOKENS[token](*rec) + b">\n" for rec in _orders_0())
    assert (status, out, err) == (0, want, "")


def test_binary_length_is_a_big_endian_int32(capsysbinary, log_dir):
    # KC_FMT_PAYLOAD_LEN_BINARY: htobe32 of the length, of (uint32_t)-1 for a null value
    status, out, _ = dump(capsysbinary, "-f", "%R%s", log_dir / "orders-0")
    want = b"".join(
        (b"\xff\xff\xff\xff" if m.value is None else struct.pack(">I", len(m.value)) + m.value)
        for _, _, m in _orders_0()
    )
    assert status == 0 and out == want


def test_null_as_null(capsysbinary, log_dir):
    # -Z sets CONF_F_NULL: conf.null_str "NULL" where the key / value length is 0
    status, out, _ = dump(capsysbinary, "-Z", "-f", "%k|%s|%h\\n", log_dir / "orders-0")
    want = b"".join(
        _kcat_data(m.key, b"NULL") + b"|" + _kcat_data(m.value, b"NULL") + b"|"
        + _kcat_headers(m) + b"\n"
        for _, _, m in _orders_0()
    )  # fmt: skip
    assert status == 0 and out == want
    assert b"NULL|NULL|\n" in out  # the tombstone, and the empty record alike


def test_default_format_with_z_alone(capsysbinary, log_dir):
    # kcat.c main: without -f the consumer's format is "%s" then the -D delimiter "\n"
    status, out, _ = dump(capsysbinary, "-Z", log_dir / "orders-0")
    assert status == 0
    assert out == b"".join(_kcat_data(m.value, b"NULL") + b"\n" for _, _, m in _orders_0())


def test_escapes(capsysbinary, log_dir):
    # fmt_add: \t \n \r; \x then strtoul base 16; a digit: strtoul base 0 (decimal, 0-octal,
    # 0x-hex); any other escaped character is itself (\\ a backslash, \q a q)
    fmt = r"%o\t\x41\101\0101\0x42\q\\\r\n"
    status, out, _ = dump(capsysbinary, "-c", "2", "-f", fmt, log_dir / "orders-0")
    one = b"\tA" + bytes([101]) + bytes([0o101]) + b"Bq\\\r\n"
    assert status == 0 and out == b"0" + one + b"1" + one


def test_a_nul_escape_ends_its_literal(capsysbinary, log_dir):
    # the converted literal is a C string: strlen stops at the NUL, the rest of it is lost
    status, out, _ = dump(capsysbinary, "-c", "3", "-f", r"%o\0abc\n|%o;", log_dir / "orders-0")
    assert status == 0 and out == b"00;11;22;"


@pytest.mark.parametrize(
    ("fmt", "message"),
    [("%o %x", "Unsupported formatter: %x"), ("%o %", "Empty formatter")],
)
def test_unknown_token_is_a_usage_error(capsysbinary, log_dir, fmt, message):
    status, out, err = dump(capsysbinary, "-f", fmt, log_dir / "orders-0")
    assert status == 2 and out == b""
    assert err.strip() == f"kafka-format dump: error: {message}"


# --- -J (json.c fmt_msg_output_json) -------------------------------------------------------------


def _envelope(offset: int, magic: int, m: Message, topic="orders", partition=0) -> list:
    pairs: list = [("topic", topic), ("partition", partition), ("offset", offset)]
    if magic > 0:  # tstype and ts only where the timestamp is available
        pairs += [("tstype", "create"), ("ts", m.timestamp)]
    pairs.append(("broker", -1))
    if m.headers:  # only where the message has headers: a flat name, value array
        flat = []
        for name, value in m.headers:
            flat += [name, None if value is None else value.decode("utf-8", "surrogateescape")]
        pairs.append(("headers", flat))
    for name, data in (("key", m.key), ("payload", m.value)):
        pairs.append((name, None if data is None else data.decode("utf-8", "surrogateescape")))
    return pairs


def test_json_envelope_order_and_round_trip(capsysbinary, log_dir):
    status, out, _ = dump(capsysbinary, "-J", log_dir / "orders-0")
    lines = out.splitlines(keepends=True)
    assert status == 0 and all(line.endswith(b"\n") for line in lines)
    # yajl writes the bytes unchecked: lines with bytes that are not UTF-8 are not UTF-8
    texts = [line.decode("utf-8", "surrogateescape") for line in lines]
    got = [json.loads(text, object_pairs_hook=list) for text in texts]
    assert got == [_envelope(*rec) for rec in _orders_0()]
    raw = lines[3]
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    # yajl_string_encode: \" \\ \n short; other control bytes \u00XX in upper case; 0x7f raw
    assert b'"payload":"a\\"b\\\\c\\n\\u0001\\u001F\x7f\xc3\xa9\xfe"' in raw
    assert b'"key":"\xff\\u0000k"' in raw
    assert lines[0].startswith(b'{"topic":"orders","partition":0,"offset":0,"tstype":"create"')


def test_json_base64(capsysbinary, log_dir):
    status, out, _ = dump(capsysbinary, "-J", "--binary", "base64", log_dir / "orders-0")
    assert status == 0
    out.decode("ascii")  # every line ASCII
    got = [json.loads(line) for line in out.splitlines()]

    def b64(data: bytes | None) -> str | None:
        return None if data is None else base64.b64encode(data).decode()

    for line, (offset, _, m) in zip(got, _orders_0(), strict=True):
        assert line["offset"] == offset
        assert line["key"] == b64(m.key) and line["payload"] == b64(m.value)
        assert line.get("headers", []) == [x for n, v in m.headers for x in (n, b64(v))]


def test_json_z_changes_nothing(capsysbinary, log_dir):
    # kcat's usage: "For JSON (-J) the nullstr is always null"
    plain = dump(capsysbinary, "-J", log_dir / "orders-0")
    assert dump(capsysbinary, "-J", "-Z", log_dir / "orders-0") == plain
    assert b'"key":null,"payload":null' in plain[1]


# --- -s pack strings (format.c unpack) -----------------------------------------------------------


def test_pack_big_endian_by_default(capsysbinary, log_dir):
    status, out, err = dump(
        capsysbinary, "-s", "key=i", "-s", "value=q", "-f", "%k=%s\\n", log_dir / "orders-1"
    )
    assert out == b"".join(b"%d=%d\n" % (k, v) for k, v in COUNTERS)
    # the short value: nothing printed, kcat's line for it, and the log is intact
    assert status == 0
    assert err == (
        "warning: Failed to format message in orders [1] at offset 6: value truncated, "
        "expected 8 bytes to unpack q but only 3 bytes remaining\n"
    )


def test_pack_tokens(capsysbinary, tmp_path):
    data = (
        struct.pack(">bBhH", -3, 250, -300, 65000)
        + struct.pack("<iIqQ", -7, 4_000_000_000, -9, 2**63)
        + b"Zrest\x00hidden"
    )
    w = PartitionWriter(tmp_path, "p", 0)
    w.append([Message(b"\x00\x01", data), Message(b"k", b"\x05\x06")])
    w.close()
    status, out, err = dump(
        capsysbinary, "-s", "value=bBhH <iIqQ>c s", "-f", "%s\\n", tmp_path / "p-0"
    )
    # ' ' prints a space; c one byte; s the rest up to a NUL (printf's %.*s)
    assert out == b"-3250-30065000 -74000000000-9%dZ rest\n" % 2**63
    assert status == 0
    assert err == (
        "warning: Failed to format message in p [0] at offset 1: value truncated, "
        "expected 2 bytes to unpack h but only 0 bytes remaining\n"
    )
    # $: the end of the data; -s without key= / value= is both (here the keys)
    status, out, err = dump(capsysbinary, "-s", "b$", "-f", "%k\\n", tmp_path / "p-0")
    assert status == 0 and out == b"107\n"  # b"k": one byte, then its end
    assert err == (
        "warning: Failed to format message in p [0] at offset 0: expected key end-of-input, "
        "but 1 bytes remaining\n"
    )


def test_pack_without_format_uses_kcats_default(capsysbinary, log_dir):
    status, out, _ = dump(capsysbinary, "-s", "value=q", "-c", "2", log_dir / "orders-1")
    assert status == 0 and out == b"".join(b"%d\n" % v for _, v in COUNTERS[:2])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-s", "value=qz"], "Invalid token 'z' in value pack-format, see -s usage."),
        (["-s", "key="], "key pack-format must not be empty"),
        (["-s", "value=avro"], "-s avro decodes through a schema registry"),
        (["-f", "%s", "-J"], "not allowed with argument"),
        (["-f", "%s", "--jsonl"], "--jsonl does not go with it"),
        (["-J", "--deep-iteration"], "--deep-iteration does not go with it"),
        (["-f", "%s", "-s", "value=q", "--value-decoder", "hex"], "-s and --value-decoder"),
        (["-J", "-s", "value=q"], "-s goes with -f"),
        (["-f", "%s", "--binary", "base64"], "--binary goes with -J"),
    ],
)
def test_bad_combinations_are_usage_errors(capsysbinary, log_dir, args, message):
    status, out, err = dump(capsysbinary, *args, log_dir / "orders-0")
    assert status == 2 and out == b"" and message in err


def test_not_a_log_is_refused(capsysbinary, log_dir):
    index = next((log_dir / "orders-0").glob("*.index"))
    status, out, err = dump(capsysbinary, "-f", "%o\\n", index)
    assert status == 2 and out == b"" and "prints the records of logs" in err


# --- with ranges, filters, isolation, damage, several files, standard input ----------------------


def test_range_and_count(capsysbinary, log_dir):
    status, out, _ = dump(
        capsysbinary, "-o", "2", "-c", "3", "-f", "%o:%K\\n", log_dir / "orders-0"
    )
    recs = _orders_0()[2:5]
    assert status == 0 and out == b"".join(b"%d:%s\n" % (o, _kcat_len(m.key)) for o, _, m in recs)


def test_topic_partition_filter_and_count_over_partitions(capsysbinary, log_dir):
    status, out, _ = dump(capsysbinary, "--topic", "orders", "-f", "%t %p\\n", log_dir)
    assert status == 0
    assert out == b"orders 0\n" * len(_orders_0()) + b"orders 1\n" * (len(COUNTERS) + 1)
    status, out, _ = dump(capsysbinary, "--topic", "orders", "--partition", "1", "-J", log_dir)
    got = [json.loads(line.decode("utf-8", "surrogateescape")) for line in out.splitlines()]
    assert status == 0 and [(r["partition"], r["offset"]) for r in got] == [
        (1, i) for i in range(7)
    ]
    # kcat's -c counts messages of all partitions together
    status, out, _ = dump(capsysbinary, "-c", "10", "-f", "%t/%p/%o\\n", log_dir)
    assert status == 0 and len(out.splitlines()) == 10
    assert len({line.rsplit(b"/", 1)[0] for line in out.splitlines()}) == 2


def test_read_committed(capsysbinary, log_dir):
    status, out, _ = dump(capsysbinary, "-f", "%o %s\\n", log_dir / "clicks-0")
    assert out == b"0 committed-0\n1 committed-1\n2 aborted-0\n3 aborted-1\n6 after\n"
    status, out, _ = dump(
        capsysbinary, "--isolation", "read_committed", "-f", "%o %s\\n", log_dir / "clicks-0"
    )
    assert status == 0 and out == b"0 committed-0\n1 committed-1\n6 after\n"


def _batch_positions(data: bytes) -> list[int]:
    positions, at = [], 0
    while at + 12 <= len(data):
        positions.append(at)
        at += 12 + struct.unpack_from(">i", data, at + 8)[0]
    return positions


def _three_batches(tmp_path: Path) -> tuple[Path, bytes]:
    w = PartitionWriter(tmp_path / "src", "d", 0)
    for i in range(3):
        w.append([Message(b"k", b"batch-%d-%d" % (i, j), (), T0) for j in range(2)])
    w.close()
    seg = next((tmp_path / "src" / "d-0").glob("*.log"))
    return seg, seg.read_bytes()


def test_crc_damage_prints_the_intact_batches_and_exits_1(capsysbinary, tmp_path):
    seg, data = _three_batches(tmp_path)
    second = _batch_positions(data)[1]
    damaged = bytearray(data)
    damaged[second + 61 + 10] ^= 0x20  # in the second batch's records: CRC-covered
    path = tmp_path / "d-0" / seg.name
    path.parent.mkdir()
    path.write_bytes(damaged)
    status, out, err = dump(capsysbinary, "-f", "%s\\n", path)
    assert status == 1 and f"@{second}" in err and "crc" in err.lower()
    assert out == b"batch-0-0\nbatch-0-1\nbatch-2-0\nbatch-2-1\n"


def test_salvage_reads_past_framing_damage(capsysbinary, tmp_path):
    seg, data = _three_batches(tmp_path)
    second = _batch_positions(data)[1]
    damaged = bytearray(data)
    struct.pack_into(">i", damaged, second + 8, 7)  # a length no batch can have...
    damaged[second + 61 + 10] ^= 0x20  # ...and a CRC that fails: nothing of it is whole
    path = tmp_path / "d-0" / seg.name
    path.parent.mkdir()
    path.write_bytes(damaged)
    status, out, err = dump(capsysbinary, "-J", path)
    assert status == 1 and err.startswith("error:")
    assert [json.loads(line)["payload"] for line in out.splitlines()] == ["batch-0-0", "batch-0-1"]
    status, out, err = dump(capsysbinary, "--salvage", "-f", "%o %s\\n", path)
    assert status == 1 and err.startswith("error:")
    assert out == b"0 batch-0-0\n1 batch-0-1\n4 batch-2-0\n5 batch-2-1\n"


def test_several_files(capsysbinary, log_dir):
    logs = [next((log_dir / p).glob("*.log")) for p in ("orders-1", "clicks-0")]
    status, out, _ = dump(capsysbinary, "-f", "%t:%o\\n", *logs)
    want = [b"orders:%d" % i for i in range(len(COUNTERS) + 1)]
    want += [b"clicks:%d" % i for i in (0, 1, 2, 3, 6)]
    assert status == 0 and out.splitlines() == want


def test_standard_input(log_dir):
    """A pipe has no topic-N directory: %t prints nothing, %p -1, -J's topic is null."""
    seg = next((log_dir / "orders-0").glob("*.log"))
    cmd = [sys.executable, "-m", "kafka_format", "dump", "-q"]
    proc = subprocess.run(
        [*cmd, "-c", "2", "-f", "[%t][%p]%o %s\\n", "-"],
        input=seg.read_bytes(),
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"[][-1]0 v1\n[][-1]1 \n"
    proc = subprocess.run(
        [*cmd, "-c", "1", "-J", "-"], input=seg.read_bytes(), capture_output=True, timeout=120
    )
    assert proc.returncode == 0
    line = json.loads(proc.stdout)
    assert (line["topic"], line["partition"], line["payload"]) == (None, -1, "v1")


# --- dump's decoders through -f and -J ----------------------------------------------------------


def test_decoders_decode_what_format_and_json_print(capsysbinary, log_dir):
    """--key-decoder / --value-decoder turn %k / %s (and -J's key / payload) into the text
    they decode to; a null stays null (nothing under -f, null under -J)."""
    records = [(o, m) for o, magic, m in _orders_0()]
    status, out, _ = dump(
        capsysbinary, "-f", "%o %k|%s\\n", "--key-decoder", "hex", "--value-decoder",
        "base64", log_dir / "orders-0",
    )  # fmt: skip
    assert status == 0
    expected = b"".join(
        b"%d %s|%s\n"
        % (
            o,
            b"" if m.key is None else m.key.hex().encode(),
            b"" if m.value is None else base64.b64encode(m.value),
        )
        for o, m in records
    )
    assert out == expected
    status, out, _ = dump(
        capsysbinary, "-J", "--key-decoder", "hex", "--value-decoder", "hex", log_dir / "orders-0"
    )
    assert status == 0
    # a header value that is not UTF-8 stays raw (only keys and values are decoded)
    lines = [json.loads(line.decode("utf-8", "surrogateescape")) for line in out.splitlines()]
    assert [(line["key"], line["payload"]) for line in lines] == [
        (None if m.key is None else m.key.hex(), None if m.value is None else m.value.hex())
        for _, m in records
    ]
