# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/control_record_key.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
from enum import IntEnum
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class ControlRecordKey(KaitaiStruct):
    """The key of a record in a control batch (record_batch attributes.is_control): a schema
    version and the control type. The value's layout depends on the type: an
    EndTransactionMarker (end_txn_marker.ksy) for abort and commit; KRaft's own messages
    (LeaderChangeMessage, SnapshotHeaderRecord, ...) for the others, which are not described
    here. Kafka reads a newer key version as version 0, so later versions may carry more
    bytes after these two fields.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#controlbatch
    
    
    .. seealso::
       ControlRecordType - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/ControlRecordType.java
    """

    class ControlRecordType(IntEnum):
        abort = 0
        commit = 1
        leader_change = 2
        snapshot_header = 3
        snapshot_footer = 4
        kraft_version = 5
        kraft_voters = 6
    SEQ_FIELDS = ["version", "type"]
    def __init__(self, _io, _parent=None, _root=None):
        super(ControlRecordKey, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['version']['start'] = self._io.pos()
        self.version = self._io.read_s2be()
        self._debug['version']['end'] = self._io.pos()
        self._debug['type']['start'] = self._io.pos()
        self.type = KaitaiStream.resolve_enum(ControlRecordKey.ControlRecordType, self._io.read_s2be())
        self._debug['type']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass


