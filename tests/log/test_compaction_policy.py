"""cleanup.policy values as Kafka reads them, and which logs the cleaner would clean."""

from __future__ import annotations

import pytest

from kafka_format.runtime.log.compaction_policy import normalise, parse_policies, resolve


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("compact", "compact"),
        ("DELETE", "delete"),
        ("delete,compact", "compact,delete"),
        (" compact , delete ", "compact,delete"),
        ("compact,compact", "compact"),
    ],
)
def test_normalise(text, expected):
    assert normalise(text) == expected


@pytest.mark.parametrize("text", ["", ",", "compacted", "compact,retain"])
def test_normalise_refuses(text):
    with pytest.raises(ValueError, match="must be compact, delete or compact,delete"):
        normalise(text)


def test_parse_policies_last_wins():
    default, per_topic = parse_policies(
        ["delete", "a=compact", "compact", "a=delete", "b.c=delete"]
    )
    assert default == "compact"
    assert per_topic == {"a": "delete", "b.c": "delete"}


def test_resolve_order():
    per_topic = {"__consumer_offsets": "delete", "x": "compact,delete"}
    assert resolve("x", "delete", per_topic).policy == "compact,delete"
    assert resolve("x", "delete", per_topic).cleaned
    assert resolve("y", "delete", per_topic).cleaned is False
    assert resolve("__consumer_offsets", None, per_topic).policy == "delete"
    internal = resolve("__transaction_state", "delete", per_topic)
    assert (internal.policy, internal.source, internal.cleaned) == (
        "compact",
        "internal topic",
        True,
    )
    assert resolve("__share_group_state").cleaned
    metadata = resolve("__cluster_metadata", "compact", {"__cluster_metadata": "compact"})
    assert not metadata.cleaned and "KRaft" in metadata.note()
    unknown = resolve(None)
    assert unknown.cleaned and not unknown.known and "pass --cleanup-policy" in unknown.note()
