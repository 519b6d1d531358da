"""Which partitions Kafka's log cleaner cleans at all: a topic's ``cleanup.policy``.

A partition directory does not record its topic's configuration (that lives in the cluster's
metadata), so the policy is given (:func:`parse_policies`), known from Kafka's own internal
topics, or unknown. The cleaner picks only logs whose ``cleanup.policy`` holds ``compact``
(``LogCleanerManager.grabFilthiestCompactedLog`` filters on ``log.config.compact``, which
``LogConfig`` sets from ``cleanup.policy``); ``delete`` topics lose whole segments to
retention instead, which is no business of the cleaner. ``__cluster_metadata`` is KRaft's
metadata log (``KafkaMetadataLog``): no ``LogCleaner`` ever sees it; the controller trims it
with snapshots.

An unknown policy is treated as ``compact``: whoever runs ``compact`` on a partition expects
to see what the cleaner would do to it. The report says the policy was assumed, so that a
``delete`` topic is not mistaken for a compacted one.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPACT = "compact"
DELETE = "delete"
#: The values ``cleanup.policy`` takes (a list: ``compact,delete`` does both).
POLICIES = (COMPACT, DELETE, f"{COMPACT},{DELETE}")

#: Internal topics Kafka creates with ``cleanup.policy=compact`` (GroupCoordinator's
#: ``__consumer_offsets``, TransactionStateManager's ``__transaction_state``, the share
#: coordinator's ``__share_group_state``).
COMPACTED_INTERNAL_TOPICS = frozenset(
    {"__consumer_offsets", "__transaction_state", "__share_group_state"}
)
#: KRaft's metadata log: never cleaned by the log cleaner.
METADATA_TOPIC = "__cluster_metadata"


@dataclass(slots=True, frozen=True)
class CleanupPolicy:
    """A partition's ``cleanup.policy`` as far as it is known, and whether the cleaner
    would ever clean it."""

    #: ``compact``, ``delete``, ``compact,delete``; None when unknown or not applicable.
    policy: str | None
    #: Where it comes from: ``given``, ``internal topic``, ``KRaft metadata log``, ``unknown``.
    source: str
    #: Whether the log cleaner cleans this log (unknown policies count as compacted).
    cleaned: bool

    @property
    def known(self) -> bool:
        return self.source != "unknown"

    def note(self) -> str:
        """One line for a report: what the cleaner does with this partition and why."""
        if self.source == "KRaft metadata log":
            return (
                "a KRaft metadata log: the log cleaner never cleans it (the controller "
                "trims it with snapshots)"
            )
        if not self.cleaned:
            return (
                f"cleanup.policy={self.policy}: the log cleaner cleans only logs whose "
                "cleanup.policy includes compact; retention deletes whole segments instead"
            )
        if not self.known:
            return "cleanup.policy unknown: pass --cleanup-policy (assumed compact)"
        return f"cleanup.policy={self.policy} ({self.source})"

    def to_json(self) -> dict:
        return {"cleanupPolicy": self.policy, "policySource": self.source, "cleaned": self.cleaned}


def normalise(text: str) -> str:
    """``cleanup.policy`` as Kafka reads it: a comma-separated list, any order, no blanks
    (``delete, compact`` is ``compact,delete``). ValueError for anything else."""
    words = {w.strip().lower() for w in text.split(",") if w.strip()}
    if not words or not words <= {COMPACT, DELETE}:
        raise ValueError(f"cleanup.policy {text!r}: must be compact, delete or compact,delete")
    return ",".join(w for w in (COMPACT, DELETE) if w in words)


def parse_policies(values: list[str] | None) -> tuple[str | None, dict[str, str]]:
    """``--cleanup-policy`` values: a bare policy sets the default for every topic,
    ``TOPIC=POLICY`` one topic's (the last one given wins). ValueError on a bad value."""
    default: str | None = None
    per_topic: dict[str, str] = {}
    for value in values or ():
        topic, sep, policy = value.rpartition("=")
        if sep:
            if not topic.strip():
                raise ValueError(f"--cleanup-policy {value!r}: no topic before '='")
            per_topic[topic.strip()] = normalise(policy)
        else:
            default = normalise(value)
    return default, per_topic


def resolve(
    topic: str | None, default: str | None = None, per_topic: dict[str, str] | None = None
) -> CleanupPolicy:
    """The policy of ``topic``: KRaft's metadata log never; a topic's own setting, else
    Kafka's for its internal compacted topics, else the default given, else unknown."""
    if topic == METADATA_TOPIC:
        return CleanupPolicy(None, "KRaft metadata log", False)
    given = (per_topic or {}).get(topic or "")
    if given is None and topic in COMPACTED_INTERNAL_TOPICS:
        # created compacted by Kafka whatever the other topics are: a bare default does not
        # reach them (name them to override)
        return CleanupPolicy(COMPACT, "internal topic", True)
    if given is None:
        given = default
    if given is not None:
        return CleanupPolicy(given, "given", COMPACT in given.split(","))
    return CleanupPolicy(None, "unknown", True)
