# GENERATED FILE - DO NOT EDIT BY HAND.
# Source schema: schemas/end_txn_marker.ksy
# Generator: kaitai-struct-compiler 0.11.0 (npm), parser build,
# via scripts/gen_kaitai.py; regenerate with `make generate`.
# This is a generated file! Please edit source .ksy file and use kaitai-struct-compiler to rebuild
# type: ignore

import kaitaistruct
from kaitaistruct import KaitaiStruct, KaitaiStream, BytesIO


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
    def __init__(self, _io, _parent=None, _root=None):
        super(EndTxnMarker, self).__init__(_io)
        self._parent = _parent
        self._root = _root or self
        self._read()

    def _read(self):
        self.version = self._io.read_s2be()
        self.coordinator_epoch = self._io.read_s4be()


    def _fetch_instances(self):
        pass


