"""What every schema source answers with, and the in-memory index two of them share.

:class:`RegisteredSchema` and :class:`SchemaReference` are the registry's own entities (its
``Schema`` and ``SchemaReference`` REST objects, less metadata and rule sets, which decoding
needs not). :class:`SchemaSource` is the interface the decoders code against;
:class:`Catalog` is the registry's lookup cache as far as decoding needs it, filled by the
``_schemas`` replay (``registry_store``) and by export files (``registry``).

Subjects may be *qualified* with a context, ``:.ctx:orders-value`` (Confluent's
``QualifiedSubject``: ``[tenant_][:.context:]subject``; an open-source registry has one tenant,
``default``, and never writes its prefix). Schema ids are unique per context, not per registry:
the same id names different schemas in ``.`` (the default context) and ``.ctx``.
"""

from __future__ import annotations

import abc
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import KafkaFormatError

__all__ = [
    "DEFAULT_CONTEXT",
    "HINT",
    "Catalog",
    "RegisteredSchema",
    "SchemaReference",
    "SchemaRegistryError",
    "SchemaSource",
    "context_of",
    "normalize_context",
    "qualify_reference",
    "schema_from_json",
]

#: ``QualifiedSubject.DEFAULT_CONTEXT``: the context of every subject with no ``:.ctx:`` prefix.
DEFAULT_CONTEXT = "."
#: ``QualifiedSubject.GLOBAL_CONTEXT_NAME``: a context that matches every context.
GLOBAL_CONTEXT = ".__GLOBAL"
#: ``SchemaValue``'s ``schemaType`` when the field is absent (``AvroSchema.TYPE``).
AVRO = "AVRO"
_CONTEXT_PREFIX = ":."
#: What every "no schema source here" error ends with: the choices.
HINT = "give --schema-registry (a log dir, a _schemas-N dir, an export file or a URL)"


class SchemaRegistryError(KafkaFormatError):
    """A schema source that cannot be opened or asked: one line naming it and what is wrong."""


@dataclass(slots=True, frozen=True)
class SchemaReference:
    """A schema's import of another schema: ``name`` as the importing schema spells it (a
    Protobuf file name, an Avro full name, a JSON Schema URL), found at ``subject`` ``version``."""

    name: str
    subject: str
    version: int


@dataclass(slots=True, frozen=True)
class RegisteredSchema:
    """One schema as registered: under ``subject`` ``version`` with ``id``.

    A schema registered under several subjects keeps one id (in one context); ``subject`` and
    ``version`` are then the first of them by (subject, version), preferring versions not
    deleted. ``deleted`` is a soft delete: the version is hidden from the registry's listings
    but its id still resolves, so the records written with it still decode.
    """

    id: int
    subject: str
    version: int
    schema_type: str
    schema: str
    references: tuple[SchemaReference, ...]
    deleted: bool = False


class SchemaSource(abc.ABC):
    """Where schemas come from: a ``_schemas`` log, an export file or a live registry.

    ``spec`` is what it was opened from (``open_schema_source(source.spec)`` opens it again,
    and pickling a source ships only that: Spark sends it to executors). ``description`` says
    in one line where the schemas come from.
    """

    spec: str
    description: str

    @abc.abstractmethod
    def by_id(self, schema_id: int, *, context: str | None = None) -> RegisteredSchema | None:
        """The schema with this id in ``context`` (None: the default context, the one a
        serializer without a context writes ids of); soft-deleted ones included."""

    @abc.abstractmethod
    def by_subject(self, subject: str, version: int | None = None) -> RegisteredSchema | None:
        """``subject`` at ``version`` (soft-deleted included), or its latest version not
        deleted when ``version`` is None (or -1, the REST API's "latest")."""

    @abc.abstractmethod
    def versions(self, subject: str) -> list[RegisteredSchema]:
        """Every version the subject holds, soft-deleted ones too, by version."""

    @abc.abstractmethod
    def subjects(self) -> list[str]:
        """Every subject holding a version (soft-deleted ones too), sorted."""

    def reference(
        self, ref: SchemaReference, parent: RegisteredSchema | None = None
    ) -> RegisteredSchema | None:
        """The schema a reference names. With ``parent`` (the schema holding the reference),
        an unqualified subject is looked up in the parent's context, as the registry does
        (``QualifiedSubject.qualifySubjectWithParent``)."""
        subject = ref.subject if parent is None else qualify_reference(parent.subject, ref.subject)
        return self.by_subject(subject, ref.version)

    def explain_missing(self, schema_id: int, *, context: str | None = None) -> str:
        """One line on why :meth:`by_id` found nothing, for a decoder's error."""
        where = "" if normalize_context(context) == DEFAULT_CONTEXT else f" (context {context})"
        return f"schema id {schema_id}{where} is not in {self.description}"

    @property
    def problems(self) -> list[str]:
        """What was passed over while reading the source (records that are not the
        registry's, damage), one line each; empty when nothing was."""
        return []

    def describe(self) -> str:
        """:attr:`description`, then one line per problem."""
        return "\n".join([self.description, *(f"  {p}" for p in self.problems)])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.description}>"


class CatalogSource(SchemaSource):
    """A source whose schemas are all held in a :class:`Catalog` (a replayed ``_schemas``,
    an export file, schemas given in memory): the look-ups are the catalog's."""

    catalog: Catalog

    def by_id(self, schema_id: int, *, context: str | None = None) -> RegisteredSchema | None:
        return self.catalog.by_id(schema_id, context)

    def by_subject(self, subject: str, version: int | None = None) -> RegisteredSchema | None:
        return self.catalog.by_subject(subject, version)

    def versions(self, subject: str) -> list[RegisteredSchema]:
        return self.catalog.versions(subject)

    def subjects(self) -> list[str]:
        return self.catalog.subjects()

    def explain_missing(self, schema_id: int, *, context: str | None = None) -> str:
        return self.catalog.explain_missing(schema_id, context, self.description)


def context_of(subject: str | None) -> str:
    """The context of a (possibly qualified) subject: ``QualifiedSubject``'s parse, without
    tenants. ``:.ctx:name`` is in ``.ctx``; ``:.ctx`` (no second colon) is the context itself."""
    if subject is None or not subject.startswith(_CONTEXT_PREFIX):
        return DEFAULT_CONTEXT
    end = subject.find(":", len(_CONTEXT_PREFIX))
    return subject[1:end] if end >= 0 else subject[1:]


def unqualified(subject: str) -> str:
    """The subject without its context prefix."""
    if not subject.startswith(_CONTEXT_PREFIX):
        return subject
    end = subject.find(":", len(_CONTEXT_PREFIX))
    return subject[end + 1 :] if end >= 0 else ""


def normalize_context(context: str | None) -> str:
    """A context as the caller may spell it (``None``, ``""``, ``"."``, ``".ctx"``,
    ``":.ctx:"``) in the one form :func:`context_of` gives."""
    if not context:
        return DEFAULT_CONTEXT
    if context.startswith(":"):
        return context_of(context if context.endswith(":") else context + ":")
    return context


def qualify_reference(parent_subject: str, ref_subject: str) -> str:
    """A reference's subject in its parent's context when it names none itself
    (``QualifiedSubject.qualifySubjectWithParent``)."""
    if context_of(ref_subject) != DEFAULT_CONTEXT:
        return ref_subject
    ctx = context_of(parent_subject)
    return ref_subject if ctx == DEFAULT_CONTEXT else f":{ctx}:{ref_subject}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def schema_from_json(
    value: Any, subject: str, version: int, *, deleted: bool | None = None
) -> RegisteredSchema | str:
    """A ``SchemaValue`` (or a REST ``Schema``) object as a :class:`RegisteredSchema`, or the
    reason it is not one. Unknown fields are ignored, as the registry's Jackson classes do
    (``@JsonIgnoreProperties(ignoreUnknown = true)``); a missing ``schemaType`` is Avro
    (``SchemaValue``'s constructor). ``deleted`` overrides the object's own flag."""
    if not isinstance(value, dict):
        return f"value is JSON {type(value).__name__}, not an object"
    schema_id, text = value.get("id"), value.get("schema")
    if not _is_int(schema_id):
        return "value has no integer id"
    if not isinstance(text, str):
        return "value has no schema text"
    schema_type = value.get("schemaType")
    if schema_type is None:
        schema_type = AVRO
    elif not isinstance(schema_type, str):
        return "value's schemaType is not a string"
    refs = value.get("references")
    if refs is None:
        refs = []
    references: list[SchemaReference] = []
    # Jackson fails the whole value on a malformed reference list, and the reader thread
    # skips it (KafkaStoreReaderThread.doWork: SerializationException -> continue).
    if not isinstance(refs, list):
        return "value's references are not a list"
    for ref in refs:
        if not (
            isinstance(ref, dict)
            and isinstance(ref.get("name"), str)
            and isinstance(ref.get("subject"), str)
            and _is_int(ref.get("version"))
        ):
            return "value has a malformed reference"
        references.append(SchemaReference(ref["name"], ref["subject"], ref["version"]))
    flag = value.get("deleted") is True if deleted is None else deleted
    return RegisteredSchema(
        schema_id, subject, version, schema_type.upper(), text, tuple(references), flag
    )


@dataclass(slots=True)
class Catalog:
    """Schemas by subject and version, and ids by context, kept as the registry's
    ``InMemoryCache`` keeps them (``schemaRegistered``, ``schemaDeleted``,
    ``schemaTombstoned``, ``clearSubjects``).

    ``forgotten`` remembers ids whose last subject version was hard-deleted, and where, so a
    decoder can say why an id does not resolve.
    """

    store: dict[str, dict[int, RegisteredSchema]] = field(default_factory=dict)
    #: (context, id) -> {subject: version}: InMemoryCache.guidToSubjectVersions.
    ids: dict[tuple[str, int], dict[str, int]] = field(default_factory=dict)
    forgotten: dict[tuple[str, int], str] = field(default_factory=dict)

    def conflict(self, schema: RegisteredSchema) -> str | None:
        """Why the registry would refuse this value, if it would: its id already names
        another schema text in the context (KafkaStoreMessageHandler.validateUpdate: "Found
        a schema with duplicate ID", IGNORE_FAILURE on a reader)."""
        held = self.by_id(schema.id, context_of(schema.subject))
        if held is not None and held.schema != schema.schema:
            return (
                f"schema id {schema.id} already names another schema "
                f"({held.subject} version {held.version}); the registry ignores this one"
            )
        return None

    def put(self, schema: RegisteredSchema) -> None:
        """A SCHEMA value, deleted or not: both map the id to the subject version
        (InMemoryCache.schemaRegistered / schemaDeleted; a soft-deleted version stays
        resolvable by id "in case of a compaction", as schemaDeleted's comment says)."""
        self.store.setdefault(schema.subject, {})[schema.version] = schema
        key = (context_of(schema.subject), schema.id)
        self.ids.setdefault(key, {})[schema.subject] = schema.version
        self.forgotten.pop(key, None)

    def tombstone(self, subject: str, version: int, where: str) -> None:
        """A SCHEMA tombstone: the version leaves the store, and the id loses this subject
        version, the id itself when it was the last (InMemoryCache.schemaTombstoned)."""
        versions = self.store.get(subject)
        old = versions.pop(version, None) if versions is not None else None
        if old is None:
            return
        if not versions:
            del self.store[subject]
        self._unmap(subject, version, old.id, f"hard-deleted ({subject} version {version}{where})")

    def delete_subject(self, subject: str, upto: int) -> None:
        """A DELETE_SUBJECT value: versions 1..upto marked deleted, still resolvable by id
        (KafkaStoreMessageHandler.handleDeleteSubject)."""
        versions = self.store.get(subject, {})
        for version in range(1, upto + 1):
            schema = versions.get(version)
            if schema is not None and not schema.deleted:
                self.put(dataclasses.replace(schema, deleted=True))

    def clear_subject(self, subject: str | None, where: str) -> None:
        """A CLEAR_SUBJECT value: the soft-deleted versions of the subject (of every subject
        in a context, for ``:.ctx:``; of all, for none) leave the store and the ids
        (InMemoryCache.clearSubjects with matchingSubjectPredicate)."""
        for name in [s for s in self.store if _clears(subject, s)]:
            versions = self.store[name]
            for version in [v for v, s in versions.items() if s.deleted]:
                old = versions.pop(version)
                self._unmap(name, version, old.id, f"cleared ({name} version {version}{where})")
            if not versions:
                del self.store[name]

    def _unmap(self, subject: str, version: int, schema_id: int, why: str) -> None:
        key = (context_of(subject), schema_id)
        mapped = self.ids.get(key)
        if mapped is None or mapped.get(subject) != version:
            return
        del mapped[subject]
        if not mapped:
            del self.ids[key]
            self.forgotten[key] = why

    def by_id(self, schema_id: int, context: str | None = None) -> RegisteredSchema | None:
        found = []
        for subject, version in self.ids.get((normalize_context(context), schema_id), {}).items():
            schema = self.store.get(subject, {}).get(version)
            # A version rewritten with another id keeps its old id mapping in the registry
            # (schemaRegistered never removes one); that mapping would answer with a schema
            # of a different id, which is no answer for decoding.
            if schema is not None and schema.id == schema_id:
                found.append(schema)
        return min(found, key=lambda s: (s.deleted, s.subject, s.version), default=None)

    def by_subject(self, subject: str, version: int | None = None) -> RegisteredSchema | None:
        versions = self.store.get(subject, {})
        if version is not None and version != -1:
            return versions.get(version)
        live = [v for v, s in versions.items() if not s.deleted]
        return versions[max(live)] if live else None

    def versions(self, subject: str) -> list[RegisteredSchema]:
        return [s for _, s in sorted(self.store.get(subject, {}).items())]

    def subjects(self) -> list[str]:
        return sorted(self.store)

    def counts(self) -> str:
        return f"{len(self.ids)} schemas, {len(self.store)} subjects"

    def explain_missing(self, schema_id: int, context: str | None, description: str) -> str:
        ctx = normalize_context(context)
        where = "" if ctx == DEFAULT_CONTEXT else f" (context {ctx})"
        why = self.forgotten.get((ctx, schema_id))
        if why is not None:
            return f"schema id {schema_id}{where} was {why} in {description}"
        return f"schema id {schema_id}{where} is not in {description}"


def _clears(target: str | None, subject: str) -> bool:
    if target is None or target == subject:
        return True
    if unqualified(target):  # a subject, not a context: only itself
        return False
    ctx = context_of(target)
    return ctx == GLOBAL_CONTEXT or ctx == context_of(subject)
