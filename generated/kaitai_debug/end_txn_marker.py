# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/end_txn_marker.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), debug build (_debug positions, no auto-read),
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO
import collections


if getattr(kaitaistruct, 'API_VERSION', (0, 9)) < (0, 11):
    raise Exception("Incompatible Kaitai Struct Python API: 0.11 or later is required, but you have %s" % (kaitaistruct.__version__))

class EndTxnMarker(KaitaiStruct):
    """The value of an abort or commit control record (control_record_key.ksy), written by the
    transaction coordinator at the end of a transaction.
    
    .. seealso::
       Source - https://kafka.apache.org/documentation/#controlbatch
    
    
    .. seealso::
       EndTransactionMarker - https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/record/EndTransactionMarker.java
    """
    SEQ_FIELDS = ["version", "coordinator_epoch"]
    def __init__(self, _io, _parent=None, _root=None):
        super(EndTxnMarker, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._debug = collections.defaultdict(dict)

    def _read(self):
        self._debug['version']['start'] = self._io.pos()
        self.version = self._io.read_s2be()
        self._debug['version']['end'] = self._io.pos()
        self._debug['coordinator_epoch']['start'] = self._io.pos()
        self.coordinator_epoch = self._io.read_s4be()
        self._debug['coordinator_epoch']['end'] = self._io.pos()


    def _fetch_instances(self):
        pass


