"""Protobuf payloads: the message after Confluent's header and message indexes, parsed with
classes built at run time from the schema its id names, as Protobuf's JSON mapping.

    >>> from kafka_format.runtime.payloads.protobuf import ProtobufDecoder
    >>> decoder = ProtobufDecoder(source)              # any registry.SchemaSource
    >>> decoder.decode(source.by_id(9), (1, 0), b"\\x0a\\x02hi")
    {'s': 'hi'}

**Schemas.** A registered Protobuf schema is ``.proto`` text, or base64 of a serialized
``FileDescriptorProto`` (Confluent's ``ProtobufSchema`` constructor tries the text, then that
form, in ``toProtoFile``; its Python serializer registers the second). Its references, whose
``name`` is the import path (``"other.proto"``), are fetched depth first. Text files are
compiled with ``grpc_tools.protoc`` (``--descriptor_set_out --include_imports``, run as its
own process so that its errors can be read), descriptor-form files join them as they are, and
the lot goes into a ``DescriptorPool`` of the schema id's own, so that two versions of one
file name never meet. Imports of Confluent's built-in files are not looked up (as its Python
client's ``_is_builtin`` skips them): ``google/protobuf/*`` come from grpc_tools' bundled
copies, ``google/type/*`` from googleapis-common-protos when it is installed, and
``confluent/meta.proto`` and ``confluent/type/{decimal,variant}.proto`` from shims here that
declare the same types. Each id is compiled once per process; a schema that does not
compile is remembered, with protoc's reason.

Confluent's canonical text of a schema registered from a descriptor writes map entries out as
nested messages with ``option map_entry = true;``, which protoc refuses: those options are
taken out before compiling and put back on the compiled messages.

**Message indexes** select the message as ``ProtobufSchema.toMessageName`` does: ``[i]`` is
the i-th message declared at the top of the file, ``[i, j]`` the j-th message declared in
that one, counting messages only (not enums). "Declared" follows the schema's form, because
Confluent counts what its own parse of the schema holds: in text, the entries protoc makes up
for ``map<>`` fields and the types of proto2 ``group`` fields are no declarations (Wire's
parser does not list them); in the descriptor form every nested type is one. A file that
declares nothing and publicly imports one other file stands for that file
(``ProtobufSchema.effectiveFile``).

**Output:** ``json_format.MessageToDict(msg, preserving_proto_field_name=True)``: field names
as declared, 64-bit integers as strings, enums by name, bytes as base64, well-known types in
their JSON forms (a ``Timestamp`` is RFC 3339 text), fields holding their default value left
out. Bytes that are no message of the type (Protobuf's parser refuses them, or they nest past
its depth limit of 100) are a :class:`PayloadDecodeError` naming the schema id, its subject and
version, and the message type.
"""

from __future__ import annotations

import base64
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.descriptor_pb2 import DescriptorProto, FileDescriptorProto

from .registry_model import RegisteredSchema, SchemaSource
from .wire import PayloadDecodeError, resolve_references, schema_label

__all__ = ["BUILTIN_PREFIXES", "PROTOC_TIMEOUT", "ProtobufDecoder", "is_builtin"]

#: Import paths Confluent treats as built in: never sent as references, never looked up.
BUILTIN_PREFIXES = ("google/protobuf/", "google/type/", "confluent/")
#: Seconds one protoc run may take (it compiles a schema and its imports: milliseconds).
PROTOC_TIMEOUT = 120

# Confluent's built-in files (protobuf-types/src/main/proto/confluent), by the types and
# extension numbers they declare: what a schema importing them needs to compile and decode.
_CONFLUENT_FILES = {
    "confluent/meta.proto": """syntax = "proto3";
package confluent;
import "google/protobuf/descriptor.proto";
message Meta {
  string doc = 1;
  map<string, string> params = 2;
  repeated string tags = 3;
  repeated Rule rules = 4;
}
message Rule { string name = 1; string doc = 2; string expr = 3; string sql = 4; }
extend google.protobuf.FileOptions { Meta file_meta = 1088; }
extend google.protobuf.MessageOptions { Meta message_meta = 1088; }
extend google.protobuf.FieldOptions { Meta field_meta = 1088; }
extend google.protobuf.EnumOptions { Meta enum_meta = 1088; }
extend google.protobuf.EnumValueOptions { Meta enum_value_meta = 1088; }
""",
    "confluent/type/decimal.proto": """syntax = "proto3";
package confluent.type;
message Decimal { bytes value = 1; uint32 precision = 2; int32 scale = 3; }
""",
    "confluent/type/variant.proto": """syntax = "proto3";
package confluent.type;
message Variant { bytes metadata = 1; bytes value = 2; }
""",
    # The path confluent.type.Decimal had before: Confluent's Python client keeps it as a file
    # that publicly imports the new one.
    "confluent/types/decimal.proto": """syntax = "proto3";
import public "confluent/type/decimal.proto";
""",
}
_MAP_ENTRY_OPTION = re.compile(r"option\s+map_entry\s*=\s*true\s*;")
_MESSAGE_HEADER = re.compile(r"\bmessage\s+([A-Za-z_][A-Za-z0-9_]*)\s*\{")
_BASE64_TEXT = re.compile(r"[A-Za-z0-9+/=\s]+")
#: Compiled schemas by (id, subject, version, text, references' texts), for every decoder
#: of the process, and the lock that makes each compile once.
_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_LOCK = threading.Lock()


def is_builtin(name: str) -> bool:
    """Whether an import path is one of Confluent's built-in files."""
    return name.startswith(BUILTIN_PREFIXES)


def _grpc_include() -> str | None:
    """grpc_tools' bundled ``google/protobuf/*.proto``."""
    spec = importlib.util.find_spec("grpc_tools")
    if spec is None or spec.origin is None:
        return None
    return str(Path(spec.origin).parent / "_proto")


def _google_type_dir() -> str | None:
    """googleapis-common-protos' ``google/type`` folder of ``.proto`` files, when installed.
    Only that folder is offered to protoc (linked under the built-in files), not the
    site-packages it sits in, where other packages' files would answer imports."""
    try:
        spec = importlib.util.find_spec("google.type")
    except (ImportError, ValueError):
        return None
    for location in spec.submodule_search_locations or () if spec is not None else ():
        if (Path(location) / "date.proto").is_file():
            return str(location)
    return None


def _descriptor_form(text: str) -> FileDescriptorProto | None:
    """The ``FileDescriptorProto`` a schema string holds in base64, or None for text."""
    if not text.strip() or not _BASE64_TEXT.fullmatch(text):
        return None
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
        return FileDescriptorProto.FromString(raw)
    except Exception:  # not base64, or not a FileDescriptorProto: text, then
        return None


def _explicit_entries(text: str) -> tuple[str, set[str]]:
    """The text without ``option map_entry = true;``, and the names of the messages that
    held one (Confluent writes options first in a message, so the message is the nearest
    header before the option)."""
    names: set[str] = set()
    for option in _MAP_ENTRY_OPTION.finditer(text):
        headers = list(_MESSAGE_HEADER.finditer(text, 0, option.start()))
        if headers:
            names.add(headers[-1].group(1))
    return _MAP_ENTRY_OPTION.sub("", text), names


def _messages(container: FileDescriptorProto | DescriptorProto) -> Iterable[DescriptorProto]:
    if isinstance(container, FileDescriptorProto):
        return container.message_type
    return container.nested_type


@dataclass(slots=True)
class _File:
    proto: FileDescriptorProto
    text: bool  # compiled from .proto text (else registered as a descriptor)
    entries: set[str] = field(default_factory=set)  # map entries the text wrote out


@dataclass(slots=True)
class _Compiled:
    pool: descriptor_pool.DescriptorPool
    files: dict[str, _File]
    main: str
    classes: dict[tuple[int, ...], Any] = field(default_factory=dict)


class ProtobufDecoder:
    """Protobuf data under the schemas of one source, each id's schema compiled once (and a
    schema that does not compile remembered as such)."""

    def __init__(self, source: SchemaSource) -> None:
        self.source = source
        self._compiled: dict[int, _Compiled | str] = {}
        self._lock = threading.Lock()
        self._includes: tuple[str | None, str | None] | None = None

    # -- compiling ---------------------------------------------------------------------------

    def _get(self, schema: RegisteredSchema) -> _Compiled:
        compiled = self._compiled.get(schema.id)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(schema.id)
                if compiled is None:
                    compiled = self._compiled[schema.id] = self._compile_once(schema)
        if isinstance(compiled, str):
            raise PayloadDecodeError(compiled)
        return compiled

    def _compile_once(self, schema: RegisteredSchema) -> _Compiled | str:
        """The schema compiled, or why it does not compile: once per process for the same
        schema and references (a key decoder and a value decoder, or decoders unpickled in
        each task of an executor, share it), since protoc is a process of its own."""
        try:
            refs = resolve_references(self.source, schema, skip=is_builtin)
        except PayloadDecodeError as exc:
            return exc.reason
        key = (schema.id, schema.subject, schema.version, schema.schema,
               tuple((name, ref.schema) for name, ref in refs))  # fmt: skip
        with _SHARED_LOCK:
            compiled = _SHARED.get(key)
            if compiled is None:
                try:
                    compiled = self._build(schema, refs)
                except PayloadDecodeError as exc:
                    compiled = exc.reason
                except Exception as exc:  # no temporary folder, say: still said once
                    compiled = f"{schema_label(schema)} could not be compiled: {_reason(exc)}"
                _SHARED[key] = compiled
        return compiled

    def _build(
        self, schema: RegisteredSchema, refs: list[tuple[str, RegisteredSchema]]
    ) -> _Compiled:
        label = schema_label(schema)
        main = f"kafka-format-schema-{schema.id}.proto"
        entries = [*refs, (main, schema)]
        files: dict[str, _File] = {}
        texts: dict[str, str] = {}
        for name, registered in entries:
            proto = _descriptor_form(registered.schema)
            if proto is not None:
                proto.name = name  # as Confluent's Python client names it (_str_to_proto)
                files[name] = _File(proto, text=False)
            else:
                texts[name], found = _explicit_entries(registered.schema)
                files[name] = _File(FileDescriptorProto(), text=True, entries=found)
        wanted = set(texts)
        for file in files.values():
            wanted.update(d for d in file.proto.dependency if d not in files)
        if wanted:
            for proto in self._protoc(label, texts, files, sorted(wanted)):
                if proto.name in texts:
                    files[proto.name].proto = proto
                elif proto.name not in files:
                    files[proto.name] = _File(proto, text=False)
        explicit = _mark_entries(files)
        try:
            pool = _pool(files, main)
        except PayloadDecodeError:
            raise
        except Exception as exc:
            if not explicit:
                raise PayloadDecodeError(f"{label} does not load: {_reason(exc)}") from None
            # The written-out map entries were not accepted as maps: keep them as the plain
            # repeated messages they are on the wire (same bytes; JSON lists, not objects).
            for file in files.values():
                _unmark(file.proto, explicit)
            try:
                pool = _pool(files, main)
            except Exception as again:
                raise PayloadDecodeError(f"{label} does not load: {_reason(again)}") from None
        return _Compiled(pool, files, main)

    def _protoc(
        self, label: str, texts: dict[str, str], files: dict[str, _File], inputs: list[str]
    ) -> list[FileDescriptorProto]:
        if self._includes is None:
            self._includes = (_grpc_include(), _google_type_dir())
        grpc_include, google_type = self._includes
        with tempfile.TemporaryDirectory(prefix="kafka-format-protoc-") as tmp:
            root = Path(tmp)
            src, shims, out = root / "src", root / "builtin", root / "out.pb"
            src.mkdir()
            for name, text in texts.items():
                _write(src, name, text, label)
            for name, text in _CONFLUENT_FILES.items():
                _write(shims, name, text, label)
            if google_type is not None:
                (shims / "google").mkdir()
                (shims / "google" / "type").symlink_to(google_type, target_is_directory=True)
            # The schema's own files first: a reference is found before any built-in file.
            command = [sys.executable, "-m", "grpc_tools.protoc", f"-I{src}"]
            if grpc_include is not None:
                command.append(f"-I{grpc_include}")
            command.append(f"-I{shims}")
            given = [f.proto for f in files.values() if not f.text]
            if given:
                binary = root / "given.pb"
                binary.write_bytes(descriptor_pb2.FileDescriptorSet(file=given).SerializeToString())
                command.append(f"--descriptor_set_in={binary}")
            command += ["--include_imports", f"--descriptor_set_out={out}", *inputs]
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=PROTOC_TIMEOUT, cwd=tmp
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                raise PayloadDecodeError(f"{label}: protoc did not run: {_reason(exc)}") from None
            if done.returncode != 0 or not out.is_file():
                said = " ".join(done.stderr.replace(f"{src}{os.sep}", "").split())
                raise PayloadDecodeError(
                    f"{label} does not compile as Protobuf: {said[:500] or 'protoc failed'}"
                )
            return list(descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file)

    # -- decoding ----------------------------------------------------------------------------

    def message_class(self, schema: RegisteredSchema, indexes: tuple[int, ...]) -> Any:
        """The generated class of the message ``indexes`` select in ``schema``."""
        compiled = self._get(schema)
        cls = compiled.classes.get(indexes)
        if cls is None:
            name = _message_name(compiled, indexes, schema)
            cls = message_factory.GetMessageClass(compiled.pool.FindMessageTypeByName(name))
            compiled.classes[indexes] = cls
        return cls

    def decode(
        self, schema: RegisteredSchema, indexes: tuple[int, ...], payload: bytes
    ) -> dict[str, Any]:
        """The JSON-ready value of one message (``payload``: the bytes after the indexes)."""
        cls = self.message_class(schema, indexes)
        compiled = self._get(schema)
        message = cls()
        try:
            message.ParseFromString(payload)
            return json_format.MessageToDict(
                message, preserving_proto_field_name=True, descriptor_pool=compiled.pool
            )
        except Exception as exc:
            raise PayloadDecodeError(
                f"does not parse as Protobuf {cls.DESCRIPTOR.full_name} under "
                f"{schema_label(schema)}: {_reason(exc)}"
            ) from None


def _write(folder: Path, name: str, text: str, label: str) -> None:
    path = (folder / name).resolve()
    # An import path is relative and stays inside the folder; anything else is no file name.
    if name.startswith("/") or folder.resolve() not in path.parents:
        raise PayloadDecodeError(f"{label}: reference name {name!r} is no relative file path")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _mark_entries(files: dict[str, _File]) -> set[str]:
    """Put ``map_entry`` back on the messages the text wrote it on (taken out for protoc):
    each file's ``entries`` become their full names, and all of them are returned."""

    def walk(messages: Iterable[DescriptorProto], prefix: str, names: set[str]) -> set[str]:
        marked = set()
        for message in messages:
            full = f"{prefix}.{message.name}" if prefix else message.name
            numbers = sorted((f.name, f.number) for f in message.field)
            if message.name in names and numbers == [("key", 1), ("value", 2)]:
                message.options.map_entry = True
                marked.add(full)
            marked |= walk(message.nested_type, full, names)
        return marked

    every: set[str] = set()
    for file in files.values():
        if file.text and file.entries:
            file.entries = walk(file.proto.message_type, file.proto.package, file.entries)
            every |= file.entries
    return every


def _unmark(proto: FileDescriptorProto, names: set[str]) -> None:
    def walk(messages: Iterable[DescriptorProto], prefix: str) -> None:
        for message in messages:
            full = f"{prefix}.{message.name}" if prefix else message.name
            if full in names:
                message.options.ClearField("map_entry")
            walk(message.nested_type, full)

    walk(proto.message_type, proto.package)


def _pool(files: dict[str, _File], main: str) -> descriptor_pool.DescriptorPool:
    """A pool holding ``main`` and every file it imports, each after its imports."""
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(name: str, chain: tuple[str, ...]) -> None:
        if name in added:
            return
        if name in chain:
            raise PayloadDecodeError(f"files import each other: {' -> '.join((*chain, name))}")
        file = files.get(name)
        if file is None:
            who = chain[-1] if chain else main
            raise PayloadDecodeError(
                f"{who} imports {name}, which neither its references nor the built-in files hold"
            )
        for dependency in file.proto.dependency:
            add(dependency, (*chain, name))
        pool.Add(file.proto)
        added.add(name)

    add(main, ())
    return pool


def _effective(compiled: _Compiled) -> _File:
    """``ProtobufSchema.effectiveFile``: a file that declares nothing and publicly imports
    exactly one other (and nothing else) stands for that file."""
    file = compiled.files[compiled.main]
    proto = file.proto
    if (
        not proto.message_type
        and not proto.enum_type
        and not proto.service
        and not proto.extension
        and len(proto.dependency) == 1
        and list(proto.public_dependency) == [0]
    ):
        leaf = compiled.files.get(proto.dependency[0])
        if leaf is not None and (leaf.proto.message_type or leaf.proto.enum_type):
            return leaf
    return file


def _declared(
    file: _File, container: FileDescriptorProto | DescriptorProto, prefix: str
) -> list[DescriptorProto]:
    """The messages the schema itself declares in ``container``, in order."""
    messages = list(_messages(container))
    if not file.text:
        return messages
    # Only proto2 has group syntax; in editions a delimited field's type is a declared message.
    proto2 = file.proto.syntax in ("", "proto2")
    groups = {
        f.type_name.rsplit(".", 1)[-1]
        for f in getattr(container, "field", ())
        if proto2 and f.type == f.TYPE_GROUP
    }
    kept = []
    for message in messages:
        full = f"{prefix}.{message.name}" if prefix else message.name
        if message.options.map_entry and full not in file.entries:
            continue  # made up by protoc for a map<> field
        if message.name in groups:
            continue  # the type of a proto2 group field
        kept.append(message)
    return kept


def _message_name(compiled: _Compiled, indexes: tuple[int, ...], schema: RegisteredSchema) -> str:
    file = _effective(compiled)
    container: FileDescriptorProto | DescriptorProto = file.proto
    prefix = file.proto.package
    for depth, index in enumerate(indexes):
        declared = _declared(file, container, prefix)
        if not 0 <= index < len(declared):
            what = "the file" if depth == 0 else container.name
            kind = "top-level" if depth == 0 else "nested"
            plural = "" if len(declared) == 1 else "s"
            raise PayloadDecodeError(
                f"message indexes {list(indexes)} name no message of {schema_label(schema)}: "
                f"index {index}, but {what} declares {len(declared)} {kind} message{plural}"
            )
        container = declared[index]
        prefix = f"{prefix}.{container.name}" if prefix else container.name
    return prefix


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
